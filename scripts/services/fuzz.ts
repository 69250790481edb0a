// Installs schemathesis, the contract fuzzer of test/http/contract-fuzz.test.ts, from PyPI into
// <project>/.tools/fuzz-venv, apart from the engines in .services (its Rust extension holds
// runtime-dispatched AVX-512 code under stripped names, which the engines' portability check would
// flag), the way install.ts installs the engines: every package pinned (schemathesis and what it
// needs, so a new machine gets the same run), binary wheels only, a marker recording what was
// installed, and a lock so parallel test files install it once.
// `npx tsx scripts/services/fuzz.ts` installs it by hand.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TOOLS_DIR } from './paths.js';
import type { Log } from './proc.js';
import { ensureVenv } from './venv.js';

/** schemathesis 4.32.5 and its dependencies as pip resolved them (Python 3.11). */
export const FUZZ_PACKAGES = [
  'schemathesis==4.32.5',
  'anyio==4.16.0',
  'certifi==2026.10.18',
  'charset-normalizer==3.5.2',
  'click==8.5.1',
  'graphql-core==3.3.2',
  'harfile==0.6.0',
  'hypothesis==6.170.15',
  'hypothesis-graphql==0.13.5',
  'idna==3.20',
  'iniconfig==2.3.1',
  'jsonschema_rs==0.60.3',
  'markdown-it-py==4.3.0',
  'MarkupSafe==3.0.4',
  'mdurl==0.1.2',
  'packaging==26.3',
  'pluggy==1.7.0',
  'Pygments==2.21.0',
  'pyrate-limiter==4.5.1',
  'pytest==9.2.0',
  'PyYAML==6.0.3',
  'requests==2.34.2',
  'rich==15.0.0',
  'sortedcontainers==2.4.0',
  'typing_extensions==4.16.0',
  'urllib3==2.8.0',
  'Werkzeug==3.1.9',
] as const;

export const FUZZ_VENV = path.join(TOOLS_DIR, 'fuzz-venv');
export const SCHEMATHESIS_BIN = path.join(FUZZ_VENV, 'bin', 'schemathesis');

/** The schemathesis command, installed first when missing or of other pins. */
export async function installFuzz(opts: { log?: Log } = {}): Promise<string> {
  await ensureVenv(FUZZ_VENV, FUZZ_PACKAGES, 'schemathesis', opts.log ?? (() => {}));
  return SCHEMATHESIS_BIN;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  installFuzz({ log: (line) => console.log(line) }).then(
    (bin) => console.log(bin),
    (error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
