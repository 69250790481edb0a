// The peer engine for BM25: Tantivy (the Rust search library) through its official Python
// bindings, pinned, installed from PyPI into .services/ on first use, beside the engines it is measured
// against (its wheel passes the same portability check). It indexes the same texts and answers the
// same queries, in-process, so its latency is the engine's alone. Its process stays up once the
// index is built, so that it can be measured again beside the service, in the same minutes: this
// machine's speed drifts by more than the figures compared.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { SERVICES_DIR } from '../../scripts/services/paths.js';
import { ensureVenv } from '../../scripts/services/venv.js';

const TANTIVY_PACKAGES = ['tantivy==0.27.0'] as const;
const VENV = path.join(SERVICES_DIR, 'tantivy-venv');
const SCRIPT = path.join(import.meta.dirname, 'tantivy_bm25.py');

export interface TantivyPeer {
  engine: string;
  build_ms: number;
  /** Every query `rounds` times: per query and round, search plus reading the hits' ids, in ms. */
  search(rounds: number): Promise<number[]>;
  close(): void;
}

/** Tantivy's index of `texts`, built in a process of its own that answers `queries` (top `k`) when asked. */
export async function startTantivyPeer(texts: string[], queries: string[], k: number, log: (line: string) => void): Promise<TantivyPeer> {
  await ensureVenv(VENV, TANTIVY_PACKAGES, 'tantivy', log);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tantivy-peer-'));
  try {
    // JSON lines: the job, then a text a line (a million texts are too long for one JSON string).
    const job = path.join(dir, 'job.jsonl');
    const fd = fs.openSync(job, 'w');
    try {
      fs.writeSync(fd, `${JSON.stringify({ queries, k })}\n`);
      for (let i = 0; i < texts.length; i += 10_000) {
        const lines = texts.slice(i, i + 10_000).map((text) => JSON.stringify(text));
        fs.writeSync(fd, `${lines.join('\n')}\n`);
      }
    } finally {
      fs.closeSync(fd);
    }
    const child = spawn(path.join(VENV, 'bin', 'python'), [SCRIPT, job], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (part: Buffer) => {
      stderr = (stderr + part.toString()).slice(-4000);
    });
    const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async <T>(): Promise<T> => {
      const line = await lines.next();
      if (line.done) throw new Error(`the Tantivy peer exited (${child.exitCode ?? child.signalCode}): ${stderr.trim().slice(-500)}`);
      return JSON.parse(line.value) as T;
    };
    const built = await next<{ version: string | null; build_ms: number }>().catch((error: unknown) => {
      child.kill();
      throw error;
    });
    return {
      engine: built.version ?? TANTIVY_PACKAGES[0],
      build_ms: built.build_ms,
      search: async (rounds) => {
        child.stdin.write(`${JSON.stringify({ rounds })}\n`);
        return (await next<{ latencies_ms: number[] }>()).latencies_ms;
      },
      close: () => child.stdin.end(),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
