// The load suite: concurrent keep-alive clients against the service in a process of its own, for a
// bounded time, with mixed searches (hybrid, semantic, bm25) and about 10% writes (POST /api/chunk).
// Each client is one keep-alive connection (an http.Agent with one socket) that sends a request,
// reads the answer, waits a little and sends the next; now and then it goes quiet for 1–10 s, as
// applications do between bursts, so the server's keep-alive timeout meets idle sockets of every
// age. Nothing is retried: every reset, timeout or non-2xx answer is an error, and any error fails
// the run. Reported: requests, errors by kind, p50 / p99 per kind, connections opened, and what
// else the machine was doing (load average, CPU of other processes).
import http from 'node:http';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import knex from 'knex';
import { createClient } from '../sdk/src/generated/client/index.js';
import { createDataset, createOrganization } from '../sdk/src/generated/sdk.gen.js';
import type { ChunkReqPayload } from '../sdk/src/generated/types.gen.js';
import { generateCorpus, prng } from './corpus.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { cpuDelta, descendantCpu } from './procs.js';
import { fmt, percentile, table } from './report.js';
import { autovacuumIdle, queriesFrom } from './search.js';
import { spawnService } from './service-process.js';

export interface LoadOptions {
  clients: number;
  seconds: number;
  /**
   * The same clients for this long before the measured run: a service just loaded with chunks is
   * still building its in-memory BM25 index and, in full mode, PostgreSQL is vacuuming the new rows.
   */
  warmupSeconds: number;
  /** Chunks loaded before the clients start. */
  chunks: number;
  /** Share of requests that are writes. */
  writeShare: number;
  /** A directory for V8 CPU profiles of the service (`--cpu-profile`); the measured run is their last `seconds`. */
  cpuProfile?: string;
  /** Share of requests after which a client goes quiet for 1–10 s. */
  idleShare: number;
  /**
   * The longest pause between a client's requests (each pause drawn from 0 to this): on a fast
   * machine these pauses, not the service, cap the rate; 0 finds the service's ceiling.
   */
  pauseMs: number;
  /** A request without its answer after this long counts as a timeout. */
  timeoutMs: number;
  seed: number;
}

export const DEFAULT_LOAD: Omit<LoadOptions, 'seed'> = {
  clients: 20,
  seconds: 45,
  warmupSeconds: 15,
  chunks: 2000,
  writeShare: 0.1,
  idleShare: 0.03,
  pauseMs: 50,
  timeoutMs: 30_000,
};

const SEARCH_TYPES = ['hybrid', 'semantic', 'bm25'] as const;
type Kind = (typeof SEARCH_TYPES)[number] | 'write';
type ErrorKind = 'reset' | 'timeout' | 'non-2xx' | 'other';

interface KindFigures {
  requests: number;
  errors: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export interface LoadResult {
  options: LoadOptions;
  /** The load, and how long PostgreSQL's autovacuum then worked on the new rows before the clients started. */
  load: { chunks: number; wall_s: number; autovacuum_s: number };
  /** The warm-up run, not counted: its answers per second, p99 and errors. */
  warmup: { seconds: number; requests_per_s: number; p99_ms: number; errors: number };
  clients: number;
  measured_s: number;
  requests: number;
  requests_per_s: number;
  errors: Record<ErrorKind, number>;
  error_samples: string[];
  by_kind: Record<Kind | 'all', KindFigures>;
  chunks_written: number;
  idle_pauses: number;
  /** TCP connections the clients had to open: one each when the server never closes one under them. */
  connections_opened: number;
  machine_load: {
    loadavg_1m_before: number;
    loadavg_1m_after: number;
    cores: number;
    /** CPU seconds of the whole machine over the run, and of this benchmark's own process tree. */
    machine_cpu_s: number | null;
    bench_tree_cpu_s: number;
    other_processes_cpu_s: number | null;
    /** CPU seconds by command among this benchmark's descendants (the service, engines in full mode). */
    descendants_cpu_s: Record<string, number>;
  };
}

export async function runLoad(modeEnv: ModeEnvironment, options: LoadOptions, log: (line: string) => void): Promise<LoadResult> {
  const env = await modeEnv.freshEnv();
  const service = await spawnService({ ...env, LOG_LEVEL: 'warn' }, log, options.cpuProfile);
  try {
    const admin = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const org = await createOrganization({ client: admin, body: { name: 'bench-load' } });
    if (!org.data) throw new Error(`createOrganization answered ${org.response?.status}`);
    const ds = await createDataset({ client: admin, headers: { 'SVC-Organization': org.data.id }, body: { dataset_name: 'bench-load' } });
    if (!ds.data) throw new Error(`createDataset answered ${ds.response?.status}`);
    const datasetId = ds.data.id;

    const corpus = generateCorpus({ count: options.chunks, seed: options.seed });
    log(`loading ${fmt(options.chunks)} chunks…`);
    const t0 = performance.now();
    await loadCorpus(service.url, datasetId, corpus);
    const load = { chunks: options.chunks, wall_s: Math.round((performance.now() - t0) / 100) / 10 };
    log(`loaded in ${load.wall_s} s`);
    const vacuumS = env.DATABASE_URL ? await vacuumed(env.DATABASE_URL) : 0;
    if (vacuumS > 0) log(`autovacuum of the new rows finished ${vacuumS} s after the load`);

    const queries = queriesFrom(corpus, 500, options.seed + 1);
    const writes = generateCorpus({ count: 1000, seed: options.seed + 2, prefix: 'load' });
    const warm = { seconds: options.warmupSeconds, requests_per_s: 0, p99_ms: 0, errors: 0 };
    if (options.warmupSeconds > 0) {
      log(`warm-up: the same clients for ${options.warmupSeconds} s, not counted…`);
      const run = await drive(service.url, datasetId, queries, writes, { ...options, seconds: options.warmupSeconds, seed: options.seed + 7 }, log);
      Object.assign(warm, { requests_per_s: run.requests_per_s, p99_ms: run.by_kind.all.p99_ms, errors: run.by_kind.all.errors });
    }
    log(`${options.clients} clients for ${options.seconds} s…`);
    return { options, load: { ...load, autovacuum_s: vacuumS }, warmup: warm, ...(await drive(service.url, datasetId, queries, writes, options, log)) };
  } finally {
    await service.stop();
  }
}

/**
 * Waits for PostgreSQL's autovacuum to finish with the rows just loaded (at most 10 minutes): a
 * service that has just taken 100,000 chunks vacuums millions of postings, which is not the steady
 * state the clients measure. The seconds waited.
 */
async function vacuumed(databaseUrl: string): Promise<number> {
  const db = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } });
  try {
    return await autovacuumIdle(db, 600_000);
  } finally {
    await db.destroy();
  }
}

/** The corpus in batches of 120, two requests in flight, before the clock starts. */
async function loadCorpus(url: string, datasetId: string, corpus: ChunkReqPayload[]): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  let next = 0;
  const worker = async () => {
    for (let i = next; i < corpus.length; i = next) {
      next += 120;
      const answer = await request(agent, url, 'POST', '/api/chunk', datasetId, corpus.slice(i, i + 120), 120_000);
      if (answer.status !== 200) throw new Error(`loading: POST /api/chunk answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    }
  };
  try {
    await Promise.all([worker(), worker()]);
  } finally {
    agent.destroy();
  }
}

async function drive(url: string, datasetId: string, queries: string[], writes: ChunkReqPayload[], options: LoadOptions, log: (line: string) => void) {
  const latencies: Record<Kind, number[]> = { hybrid: [], semantic: [], bm25: [], write: [] };
  const failed: Record<Kind, number> = { hybrid: 0, semantic: 0, bm25: 0, write: 0 };
  const errors: Record<ErrorKind, number> = { reset: 0, timeout: 0, 'non-2xx': 0, other: 0 };
  const samples: string[] = [];
  let written = 0;
  let writeNo = 0;
  let idlePauses = 0;
  let connections = 0;

  const cpuBefore = { machine: machineBusyMs(), tree: treeCpuMs(), descendants: descendantCpu() };
  const loadBefore = os.loadavg()[0];
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const progress = setInterval(() => {
    const done = Object.values(latencies).reduce((n, l) => n + l.length, 0);
    log(`  ${fmt((performance.now() - started) / 1000)} s: ${fmt(done)} answers, ${Object.values(errors).reduce((a, b) => a + b, 0)} errors`);
  }, 10_000);

  const client = async (n: number) => {
    const random = prng(options.seed * 1000 + n);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const connected = () => void connections++;
    try {
      while (performance.now() < deadline) {
        const isWrite = random() < options.writeShare;
        const kind: Kind = isWrite ? 'write' : SEARCH_TYPES[Math.floor(random() * SEARCH_TYPES.length)];
        let body: unknown;
        if (isWrite) {
          const count = 1 + Math.floor(random() * 3);
          body = Array.from({ length: count }, () => {
            const chunk = writes[writeNo % writes.length];
            // The run's seed in the tracking id: the warm-up's writes do not make the measured run's no-ops.
            return { ...chunk, tracking_id: `${chunk.tracking_id}-${options.seed}-${++writeNo}` };
          });
        } else {
          body = { query: queries[Math.floor(random() * queries.length)], search_type: kind, page_size: 10 };
        }
        const t0 = performance.now();
        try {
          const answer = await request(agent, url, 'POST', isWrite ? '/api/chunk' : '/api/chunk/search', datasetId, body, options.timeoutMs, connected);
          if (answer.status < 200 || answer.status > 299) {
            errors['non-2xx']++;
            failed[kind]++;
            if (samples.length < 10) samples.push(`${kind}: ${answer.status} ${answer.body.slice(0, 200)}`);
          } else {
            latencies[kind].push(performance.now() - t0);
            if (isWrite) written += (body as unknown[]).length;
          }
        } catch (error) {
          const e = error as NodeJS.ErrnoException;
          const errorKind: ErrorKind = e.code === 'ETIMEDOUT' ? 'timeout' : ['ECONNRESET', 'EPIPE', 'ECONNREFUSED'].includes(e.code ?? '') ? 'reset' : 'other';
          errors[errorKind]++;
          failed[kind]++;
          if (samples.length < 10) samples.push(`${kind}: ${errorKind} after ${fmt(performance.now() - t0)} ms: ${e.code ?? ''} ${e.message}`);
        }
        const idle = random() < options.idleShare;
        if (idle) idlePauses++;
        await sleep(Math.min(idle ? 1000 + random() * 9000 : random() * options.pauseMs, deadline - performance.now()));
      }
    } finally {
      agent.destroy();
    }
  };
  try {
    await Promise.all(Array.from({ length: options.clients }, (_, n) => client(n)));
  } finally {
    clearInterval(progress);
  }
  const durationS = (performance.now() - started) / 1000;
  const machineCpu = machineBusyMs();
  const treeCpu = treeCpuMs();
  const machineCpuS = machineCpu === null || cpuBefore.machine === null ? null : (machineCpu - cpuBefore.machine) / 1000;
  const treeCpuS = (treeCpu - cpuBefore.tree) / 1000;

  const figures = (values: number[], errorCount: number): KindFigures => ({
    requests: values.length + errorCount,
    errors: errorCount,
    p50_ms: Math.round(percentile(values, 50)),
    p99_ms: Math.round(percentile(values, 99)),
    max_ms: Math.round(Math.max(...values)),
  });
  const byKind = Object.fromEntries((Object.keys(latencies) as Kind[]).map((k) => [k, figures(latencies[k], failed[k])])) as Record<Kind | 'all', KindFigures>;
  byKind.all = figures(
    Object.values(latencies).flat(),
    Object.values(failed).reduce((a, b) => a + b, 0),
  );
  return {
    clients: options.clients,
    measured_s: Math.round(durationS * 10) / 10,
    requests: byKind.all.requests,
    requests_per_s: Math.round((byKind.all.requests / durationS) * 10) / 10,
    errors,
    error_samples: samples,
    by_kind: byKind,
    chunks_written: written,
    idle_pauses: idlePauses,
    connections_opened: connections,
    machine_load: {
      loadavg_1m_before: Math.round(loadBefore * 100) / 100,
      loadavg_1m_after: Math.round(os.loadavg()[0] * 100) / 100,
      cores: os.cpus().length,
      machine_cpu_s: machineCpuS === null ? null : Math.round(machineCpuS * 10) / 10,
      bench_tree_cpu_s: Math.round(treeCpuS * 10) / 10,
      other_processes_cpu_s: machineCpuS === null ? null : Math.round(Math.max(0, machineCpuS - treeCpuS) * 10) / 10,
      descendants_cpu_s: Object.fromEntries(Object.entries(cpuDelta(cpuBefore.descendants, descendantCpu())).map(([k, ms]) => [k, Math.round(ms / 100) / 10])),
    },
  };
}

/**
 * One request on the client's connection; rejects on a network error or after `timeoutMs` (code
 * ETIMEDOUT). `connected` is called when it needs a new connection (the previous one was closed).
 */
function request(
  agent: http.Agent,
  url: string,
  method: string,
  path: string,
  datasetId: string,
  body: unknown,
  timeoutMs: number,
  connected: () => void = () => {},
): Promise<{ status: number; body: string }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, {
      method,
      agent,
      headers: {
        authorization: ADMIN_KEY,
        'svc-dataset': datasetId,
        'x-api-version': 'V2',
        'content-type': 'application/json',
        'content-length': String(payload.length),
      },
    });
    req.once('socket', () => req.reusedSocket || connected());
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    const failed = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    req.on('error', failed);
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('error', failed);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() });
      });
    });
    req.end(payload);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** CPU milliseconds the whole machine spent busy (all cores, /proc/stat); null off Linux. */
function machineBusyMs(): number | null {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
    return ((user + nice + system + irq + softirq + steal) * 1000) / 100; // USER_HZ 100
  } catch {
    return null;
  }
}

/** CPU milliseconds of this process and its descendants (the service, and the engines in full mode). */
function treeCpuMs(): number {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000 + Object.values(descendantCpu()).reduce((a, b) => a + b, 0);
}

export function formatLoad(mode: string, r: LoadResult): string {
  const rows: (string | number)[][] = [['requests', 'count', 'errors', 'p50 ms', 'p99 ms', 'max ms']];
  for (const kind of [...SEARCH_TYPES, 'write', 'all'] as const) {
    const f = r.by_kind[kind];
    rows.push([
      kind === 'write' ? 'write (POST /api/chunk, 1-3 chunks)' : kind === 'all' ? 'all' : `search ${kind}`,
      fmt(f.requests),
      fmt(f.errors),
      fmt(f.p50_ms),
      fmt(f.p99_ms),
      fmt(f.max_ms),
    ]);
  }
  const m = r.machine_load;
  const errorTotal = Object.values(r.errors).reduce((a, b) => a + b, 0);
  return [
    `load (${mode}): ${r.clients} keep-alive clients for ${fmt(r.measured_s, 1)} s, ${r.options.pauseMs ? `pausing 0-${r.options.pauseMs} ms between requests` : 'without pauses'}, against the service in its own process (${fmt(r.load.chunks)} chunks loaded first, in ${fmt(r.load.wall_s, 1)} s; autovacuum then ${fmt(r.load.autovacuum_s, 1)} s)`,
    table(rows),
    `${fmt(r.requests)} requests (${fmt(r.requests_per_s, 1)}/s), ${fmt(r.chunks_written)} chunks written, ${fmt(r.idle_pauses)} idle pauses of 1-10 s, ${fmt(r.connections_opened)} connections opened`,
    `warm-up before the clock (not counted): ${fmt(r.warmup.seconds)} s, ${fmt(r.warmup.requests_per_s, 1)} requests/s, p99 ${fmt(r.warmup.p99_ms)} ms, ${fmt(r.warmup.errors)} errors`,
    `errors: ${errorTotal} (resets ${r.errors.reset}, timeouts ${r.errors.timeout}, non-2xx ${r.errors['non-2xx']}, other ${r.errors.other})${r.error_samples.length ? `\n  ${r.error_samples.join('\n  ')}` : ''}`,
    `machine: ${m.cores} cores, load average (1 min) ${fmt(m.loadavg_1m_before, 2)} before, ${fmt(m.loadavg_1m_after, 2)} after; CPU over the run: this benchmark's processes ${fmt(m.bench_tree_cpu_s, 1)} s (${Object.entries(
      m.descendants_cpu_s,
    )
      .map(([k, s]) => `${k} ${fmt(s, 1)} s`)
      .join(', ')}), other processes ${fmt(m.other_processes_cpu_s, 1)} s`,
  ].join('\n');
}
