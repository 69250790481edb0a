// The local embedding model (files.ts), run on a worker thread (worker.js) started at first use.
// The worker runs one batch at a time; this side queues them. A query's texts go before any
// document batch still waiting, and documents go in small batches, so a search waits for at most
// one batch of an ingest in progress. Queries' vectors are cached: applications repeat queries.
import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { type Embedder, EmbeddingError, type EmbeddingPurpose } from '../types.js';
import { LOCAL_MODEL, localModelPath } from './files.js';

/** Documents per batch: small enough that a query never waits long behind one. */
const DOCUMENT_BATCH = 8;
/** Document texts that may wait for the model; more is refused (transient) until the queue drains. */
const MAX_WAITING_DOCUMENTS = 4096;

interface Batch {
  texts: string[];
  resolve(vectors: number[][]): void;
  reject(error: Error): void;
}

type FromWorker = { ready: true } | { failed: string } | { id: number; vectors: Float32Array } | { id: number; failed: string };

/** Whether the model's files are installed (npm install, or npm run install-model). */
export function localModelInstalled(): boolean {
  return Object.keys(LOCAL_MODEL.files).every((file) => fs.existsSync(localModelPath(file as keyof typeof LOCAL_MODEL.files)));
}

export class LocalEmbedder implements Embedder {
  readonly model = LOCAL_MODEL.name;
  readonly dimension = LOCAL_MODEL.dimension;
  private worker: Promise<Worker> | null = null;
  private readonly queries: Batch[] = [];
  private readonly documents: Batch[] = [];
  private waitingDocuments = 0;
  private running: { id: number; batch: Batch } | null = null;
  private lastId = 0;
  private readonly cache = new LRUCache<string, number[]>({ max: 4096 });

  async embed(texts: string[], purpose: EmbeddingPurpose): Promise<number[][]> {
    if (texts.length === 0) return [];
    if (purpose === 'query') return this.embedQueries(texts);
    if (this.waitingDocuments + texts.length > MAX_WAITING_DOCUMENTS) {
      throw new EmbeddingError(`the local model ${this.model} has ${this.waitingDocuments} texts waiting; try again shortly`, true);
    }
    const batches: Promise<number[][]>[] = [];
    for (let i = 0; i < texts.length; i += DOCUMENT_BATCH) batches.push(this.enqueue(this.documents, texts.slice(i, i + DOCUMENT_BATCH)));
    this.waitingDocuments += texts.length;
    try {
      return (await Promise.all(batches)).flat();
    } finally {
      this.waitingDocuments -= texts.length;
    }
  }

  private async embedQueries(texts: string[]): Promise<number[][]> {
    const known = new Map(texts.flatMap((text) => (this.cache.has(text) ? [[text, this.cache.get(text)!] as const] : [])));
    const missing = [...new Set(texts.filter((text) => !known.has(text)))];
    if (missing.length > 0) {
      const vectors = await this.enqueue(this.queries, missing);
      for (const [i, text] of missing.entries()) {
        known.set(text, vectors[i]);
        this.cache.set(text, vectors[i]);
      }
    }
    return texts.map((text) => known.get(text)!);
  }

  private enqueue(queue: Batch[], texts: string[]): Promise<number[][]> {
    return new Promise((resolve, reject) => {
      queue.push({ texts, resolve, reject });
      void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.running) return;
    const batch = this.queries.shift() ?? this.documents.shift();
    if (!batch) return;
    const id = ++this.lastId;
    this.running = { id, batch };
    try {
      (await this.started()).postMessage({ id, texts: batch.texts });
    } catch (error) {
      this.running = null;
      batch.reject(error as Error);
      void this.next();
    }
  }

  private started(): Promise<Worker> {
    if (!this.worker && !localModelInstalled()) {
      return Promise.reject(new EmbeddingError(`the local model ${this.model} is not installed on this instance (npm run install-model installs it)`));
    }
    this.worker ??= this.start().catch((error: Error) => {
      this.worker = null;
      throw new EmbeddingError(`the local model ${this.model} did not start: ${error.message}`, true);
    });
    return this.worker;
  }

  private start(): Promise<Worker> {
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: {
        modelPath: localModelPath('model'),
        tokenizerPath: localModelPath('tokenizer'),
        maxTokens: LOCAL_MODEL.maxTokens,
        dimension: LOCAL_MODEL.dimension,
        threads: os.availableParallelism(),
      },
    });
    // An idle model keeps no process alive.
    worker.unref();
    return new Promise((resolve, reject) => {
      worker.once('message', (message: FromWorker) => {
        if ('ready' in message) resolve(worker);
        else reject(new Error('failed' in message ? message.failed : 'unexpected message'));
        worker.on('message', (answer: FromWorker) => this.answered(answer));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => {
        reject(new Error(`its thread exited with code ${code}`));
        this.stopped(code);
      });
    });
  }

  private answered(message: FromWorker): void {
    if (!('id' in message) || this.running?.id !== message.id) return;
    const { batch } = this.running;
    this.running = null;
    if ('failed' in message) batch.reject(new EmbeddingError(`the local model ${this.model} failed: ${message.failed}`));
    else {
      const { vectors } = message;
      const size = this.dimension;
      batch.resolve(batch.texts.map((_, i) => Array.from(vectors.subarray(i * size, (i + 1) * size))));
    }
    void this.next();
  }

  /** A thread that died fails what it was running; the next batch starts a new one. */
  private stopped(code: number): void {
    this.worker = null;
    const running = this.running;
    this.running = null;
    running?.batch.reject(new EmbeddingError(`the local model ${this.model} stopped (exit code ${code})`, true));
    void this.next();
  }
}

let shared: LocalEmbedder | null = null;

/** The process's one local model: its weights and thread are shared by every dataset that uses it. */
export function localEmbedder(): LocalEmbedder {
  shared ??= new LocalEmbedder();
  return shared;
}
