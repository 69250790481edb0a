// Where the services live on disk. Everything is under <project>/.services,
// which keeps its own .gitignore so nothing there is ever committed.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** scripts/services/paths.ts -> project root is two levels up. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SERVICES_DIR = path.join(PROJECT_ROOT, '.services');
export const VENV_DIR = path.join(SERVICES_DIR, 'venv');
export const BIN_DIR = path.join(SERVICES_DIR, 'bin');
/**
 * Test tools (the contract fuzzer), apart from the engines: `.services` holds only what the service
 * runs on, which CI checks for CPU-specific machine code.
 */
export const TOOLS_DIR = path.join(PROJECT_ROOT, '.tools');
export const DEFAULT_DATA_DIR = path.join(SERVICES_DIR, 'data');
/** KEY=VALUE lines written by `npm run services`, read by `npm run start:full`. */
export const ENV_FILE = path.join(SERVICES_DIR, 'env');
