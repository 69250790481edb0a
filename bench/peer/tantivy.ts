// The peer engine for BM25: Tantivy (the Rust search library) through its official Python
// bindings, pinned, installed from PyPI into .services/ on first use, beside the engines it is measured
// against (its wheel passes the same portability check). It indexes the same texts and answers the
// same queries, in-process, so its latency is the engine's alone.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SERVICES_DIR } from '../../scripts/services/paths.js';
import { ensureVenv } from '../../scripts/services/venv.js';

const TANTIVY_PACKAGES = ['tantivy==0.27.0'] as const;
const VENV = path.join(SERVICES_DIR, 'tantivy-venv');
const SCRIPT = path.join(import.meta.dirname, 'tantivy_bm25.py');

export interface PeerRun {
  engine: string;
  build_ms: number;
  /** Per query and round: search plus reading the hits' ids. */
  latencies_ms: number[];
  /** Per query, its top k as indexes into the texts. */
  tops: number[][];
}

export async function tantivyBm25(texts: string[], queries: string[], k: number, log: (line: string) => void): Promise<PeerRun> {
  await ensureVenv(VENV, TANTIVY_PACKAGES, 'tantivy', log);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tantivy-peer-'));
  try {
    // JSON lines: the job, then a text a line (a million texts are too long for one JSON string).
    const job = path.join(dir, 'job.jsonl');
    const fd = fs.openSync(job, 'w');
    try {
      fs.writeSync(fd, `${JSON.stringify({ queries, k, rounds: 3 })}\n`);
      for (let i = 0; i < texts.length; i += 10_000) {
        const lines = texts.slice(i, i + 10_000).map((text) => JSON.stringify(text));
        fs.writeSync(fd, `${lines.join('\n')}\n`);
      }
    } finally {
      fs.closeSync(fd);
    }
    const { stdout } = await promisify(execFile)(path.join(VENV, 'bin', 'python'), [SCRIPT, job], { maxBuffer: 256 * 1024 * 1024 });
    const out = JSON.parse(stdout) as Omit<PeerRun, 'engine'> & { version: string | null };
    return { engine: out.version ?? TANTIVY_PACKAGES[0], build_ms: out.build_ms, latencies_ms: out.latencies_ms, tops: out.tops };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
