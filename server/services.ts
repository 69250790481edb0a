// The engines behind the service, each chosen once at start from the configuration.
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { scheduleSearchClusters } from './domain/searchClusters/schedule.js';
import { bootstrapInstanceAdmin } from './domain/users.js';
import { chooseDefaultEmbedder } from './engines/embeddings/index.js';
import { createLexicalIndex } from './engines/lexical/index.js';
import type { LexicalIndex } from './engines/lexical/types.js';
import { openFileStorage, type FileStorage } from './engines/storage/index.js';
import { createWorkflowEngine } from './engines/workflows/index.js';
import type { WorkflowEngine } from './engines/workflows/types.js';
import { HighlightPool } from './search/highlightPool.js';
import { type Bm25Indexes, bm25Indexes } from './search/retrieval/bm25/memory.js';
import { VectorIndexes } from './search/retrieval/vectors/index.js';
import { openStore, type Store } from './store/db.js';
import { DeferredWriter } from './store/deferred.js';
import { InFlight } from './http/inFlight.js';

export interface Services {
  config: Config;
  store: Store;
  lexical: LexicalIndex;
  workflows: WorkflowEngine;
  /** The bytes of uploaded files. */
  storage: FileStorage;
  /** Analytics rows written after the answer. */
  deferred: DeferredWriter;
  /** Datasets' BM25 postings held in memory for fast search. */
  bm25: Bm25Indexes;
  /** Datasets' vectors held in memory for fast nearest-neighbour search. */
  vectors: VectorIndexes;
  /** Marks results' matches, off the service's thread. */
  highlighter: HighlightPool;
  /** The requests being answered now (counted by the app). */
  inFlight: InFlight;
  /** EMBEDDING_MODEL_NAME of new datasets that name no endpoint. */
  defaultEmbedder: string;
  close(): Promise<void>;
}

export async function openServices(config: Config, logger: Logger): Promise<Services> {
  // A first start takes a while (the database created, the model loaded): each step says so as it goes.
  const step = (what: string) => logger.info(`starting: ${what}`);
  step(config.store.kind === 'pglite' ? `the embedded database in ${config.store.dir}` : 'PostgreSQL');
  const store = await openStore(config.store, logger);
  const deferred = new DeferredWriter(store.db, logger);
  const bm25 = bm25Indexes(store.db, logger, path.join(config.dataDir, 'kept-indexes', 'bm25'));
  const vectors = new VectorIndexes(store.db, logger, path.join(config.dataDir, 'kept-indexes', 'vectors'));
  const inFlight = new InFlight();
  const highlighter = new HighlightPool({ requestsInFlight: () => inFlight.count });
  // Closed before the store, so that queued rows are written (and builds stop reading) while it is open.
  const opened: { close(): Promise<void> }[] = [highlighter, { close: () => deferred.flush() }, bm25, vectors, store];
  try {
    step('the embedding model');
    const defaultEmbedder = await chooseDefaultEmbedder(config.defaultEmbedder, logger);
    await bootstrapInstanceAdmin(store.db, config.adminApiKey);
    step(`the lexical index (${config.lexical.kind})`);
    const lexical = await createLexicalIndex(config.lexical, store);
    opened.splice(1, 0, lexical);
    const storage = await openFileStorage(config);
    step(`the workflow engine (${config.workflows.kind})`);
    const workflows = await createWorkflowEngine(config.workflows, { store, lexical, storage, outbound: config.outbound, crawl: config.crawl }, { logger });
    opened.splice(1, 0, workflows);
    await workflows.start();
    await scheduleSearchClusters(workflows, config.searchClusterIntervalMs, config.workflows.kind === 'temporal' ? config.workflows.taskQueue : null);
    return { config, store, lexical, workflows, storage, deferred, bm25, vectors, highlighter, inFlight, defaultEmbedder, close: () => closeAll(opened) };
  } catch (error) {
    await closeAll(opened);
    throw error;
  }
}

/** Closes in reverse order of opening, every one even when one fails. */
async function closeAll(opened: { close(): Promise<void> }[]): Promise<void> {
  const results = [];
  for (const engine of opened)
    results.push(
      await engine.close().then(
        () => null,
        (e: unknown) => e,
      ),
    );
  const failure = results.find((r) => r !== null);
  if (failure) throw failure;
}
