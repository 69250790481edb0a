// The workflow engine seam through its first real workflow, purgeDataset: the in-process runner in
// the embedded project, Temporal (worker inside this process) in the full project. The in-process
// runner's resume-after-restart is tested in both projects (PGlite, then PostgreSQL).
import { ApplicationFailure } from '@temporalio/activity';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../server/config.js';
import { createLexicalIndex, type LexicalIndex } from '../../server/engines/lexical/index.js';
import {
  createWorkflowEngine,
  WorkflowAlreadyRunningError,
  WorkflowFailedError,
  WorkflowInterruptedError,
  type WorkflowEngine,
} from '../../server/engines/workflows/index.js';
import { createInProcessEngine, type StepEvent } from '../../server/engines/workflows/inprocess.js';
import { openFileStorage, type FileStorage } from '../../server/engines/storage/index.js';
import { openStore, type Store } from '../../server/store/db.js';
import { createActivities } from '../../workflows/activities/index.js';
import { workflowIds } from '../../workflows/registry.js';
import { mode, testConfig } from '../support/env.js';
import { lexicalIds } from '../support/lexical.js';
import { waitFor } from '../support/wait.js';

/** The real index, with a per-dataset hook run before removeDataset (to fail or hold it). */
function instrumented(inner: LexicalIndex) {
  const hooks = new Map<string, (call: number) => Promise<void>>();
  const calls = new Map<string, number>();
  const index: LexicalIndex = {
    kind: inner.kind,
    prepare: () => inner.prepare(),
    ping: () => inner.ping(),
    upsert: (documents) => inner.upsert(documents),
    remove: (datasetId, ids) => inner.remove(datasetId, ids),
    removeDataset: async (datasetId) => {
      const call = (calls.get(datasetId) ?? 0) + 1;
      calls.set(datasetId, call);
      await hooks.get(datasetId)?.(call);
      await inner.removeDataset(datasetId);
    },
    matchedWords: (request) => inner.matchedWords(request),
    close: () => inner.close(),
  };
  return { index, hooks, calls };
}

async function seedDataset(store: Store, lexical: LexicalIndex, chunks: number): Promise<string> {
  const [org] = await store.db('organizations').insert({ name: 'workflow test org' }).returning('id');
  const [dataset] = await store.db('datasets').insert({ organization_id: org.id, name: 'doomed' }).returning('id');
  const rows = Array.from({ length: chunks }, (_, i) => ({ id: randomUUID(), dataset_id: dataset.id, chunk_html: `pelican ${i}` }));
  if (rows.length)
    await store.db('chunks').insert(rows.map((r) => ({ ...r, bm25_terms: store.db.raw("to_tsvector('english', ?)", [r.chunk_html]), bm25_length: 2 })));
  await lexical.upsert(rows.map((r) => ({ id: r.id, datasetId: dataset.id, text: r.chunk_html })));
  return dataset.id;
}

async function count(store: Store, table: string, where: Record<string, string>): Promise<number> {
  const [row] = await store.db(table).where(where).count({ n: '*' });
  return Number(row.n);
}

describe(`workflow engine (${mode})`, () => {
  let config: Config;
  let store: Store;
  let realIndex: LexicalIndex;
  let lexical: ReturnType<typeof instrumented>;
  let engine: WorkflowEngine;
  let storage: FileStorage;
  const warnings: string[] = [];
  const logger = { warn: (_: object, message: string) => void warnings.push(message), error: () => {} };

  beforeAll(async () => {
    config = await testConfig();
    store = await openStore(config.store);
    storage = await openFileStorage(config);
    realIndex = await createLexicalIndex(config.lexical, store);
    lexical = instrumented(realIndex);
    engine = await createWorkflowEngine(config.workflows, { store, lexical: lexical.index, storage }, { shutdownGraceMs: 1000, logger });
    const t0 = Date.now();
    await engine.start();
    console.info(`${engine.kind} workflow engine started in ${Date.now() - t0} ms`);
  });

  afterAll(async () => {
    await engine?.close();
    await realIndex?.close();
    await store?.close();
  });

  it('uses the engine the mode implies and pings', async () => {
    expect(engine.kind).toBe(mode === 'full' ? 'temporal' : 'in-process');
    await expect(engine.ping()).resolves.toBeUndefined();
  });

  it('purges a dataset: chunks in batches, index entries and the dataset row', async () => {
    const datasetId = await seedDataset(store, lexical.index, 12);
    const bystander = await seedDataset(store, lexical.index, 3);
    const t0 = Date.now();
    const handle = await engine.run('purgeDataset', { workflowId: workflowIds.purgeDataset(datasetId), input: { datasetId, batchSize: 5 } });
    expect(handle.workflowId).toBe(workflowIds.purgeDataset(datasetId));
    expect(await handle.result()).toEqual({ chunksDeleted: 12 });
    console.info(`${engine.kind}: purgeDataset (12 chunks, 6 activities) took ${Date.now() - t0} ms`);

    expect(await count(store, 'chunks', { dataset_id: datasetId })).toBe(0);
    expect(await count(store, 'datasets', { id: datasetId })).toBe(0);
    for (const table of ['bm25_postings', 'bm25_term_counts', 'bm25_dataset_totals', 'bm25_changes'])
      expect(await count(store, table, { dataset_id: datasetId }), table).toBe(0);
    expect(await count(store, 'bm25_dataset_totals', { dataset_id: bystander })).toBe(1);
    expect(await lexicalIds(config.lexical, store.db, datasetId, 'pelican')).toEqual([]);
    // Another dataset is untouched.
    expect(await count(store, 'chunks', { dataset_id: bystander })).toBe(3);
    expect(await lexicalIds(config.lexical, store.db, bystander, 'pelican')).toHaveLength(3);

    if (engine.kind === 'in-process') {
      const job = await store.db('jobs').where('id', handle.workflowId).first();
      expect(job).toMatchObject({ workflow: 'purgeDataset', status: 'completed', result: { chunksDeleted: 12 }, error: null, attempts: 1 });
      const steps = await store.db('job_steps').where('job_id', handle.workflowId).orderBy('seq');
      expect(steps.map((s) => [s.activity, s.result.value])).toEqual([
        ['removeDatasetFromLexicalIndex', undefined],
        ['deleteDatasetChunks', 5],
        ['deleteDatasetChunks', 5],
        ['deleteDatasetChunks', 2],
        ['deleteDatasetChunks', 0],
        ['deleteDatasetRow', undefined],
      ]);
    }
  });

  it('purging what is already gone completes with nothing deleted', async () => {
    const datasetId = randomUUID();
    const handle = await engine.run('purgeDataset', { workflowId: workflowIds.purgeDataset(datasetId), input: { datasetId } });
    expect(await handle.result()).toEqual({ chunksDeleted: 0 });
  });

  it('retries an activity that fails transiently, with back-off, and completes', async () => {
    const datasetId = await seedDataset(store, lexical.index, 4);
    const failedAt: number[] = [];
    lexical.hooks.set(datasetId, async (call) => {
      if (call <= 2) {
        failedAt.push(Date.now());
        throw new Error('lexical index unavailable (simulated outage)');
      }
    });
    warnings.length = 0;
    const handle = await engine.run('purgeDataset', { workflowId: workflowIds.purgeDataset(datasetId), input: { datasetId } });
    expect(await handle.result()).toEqual({ chunksDeleted: 4 });
    expect(warnings.length).toBeGreaterThanOrEqual(2); // each failed attempt is reported
    expect(lexical.calls.get(datasetId)).toBe(3);
    // Back-off: 1s, then 2s (initialInterval 1s, coefficient 2).
    expect(failedAt[1] - failedAt[0]).toBeGreaterThanOrEqual(900);
    expect(await count(store, 'datasets', { id: datasetId })).toBe(0);
    if (engine.kind === 'in-process') {
      const [first] = await store.db('job_steps').where({ job_id: handle.workflowId, seq: 1 });
      expect(first.attempts).toBe(3);
    }
  });

  it('does not retry an activity error marked non-retryable, and fails the workflow with its message', async () => {
    const datasetId = await seedDataset(store, lexical.index, 1);
    lexical.hooks.set(datasetId, async () => {
      throw ApplicationFailure.nonRetryable('index rejected the request', 'IndexRejected');
    });
    const workflowId = workflowIds.purgeDataset(datasetId);
    const handle = await engine.run('purgeDataset', { workflowId, input: { datasetId } });
    await expect(handle.result()).rejects.toThrow(new WorkflowFailedError(workflowId, 'index rejected the request'));
    expect(lexical.calls.get(datasetId)).toBe(1);
    expect(await count(store, 'chunks', { dataset_id: datasetId })).toBe(1);
    if (engine.kind === 'in-process') {
      expect(await store.db('jobs').where('id', workflowId).first()).toMatchObject({ status: 'failed', error: 'index rejected the request' });
    }
  });

  it('records a dataset_delete_failed event when a purge fails for good', async () => {
    const datasetId = await seedDataset(store, lexical.index, 1);
    lexical.hooks.set(datasetId, async () => {
      throw ApplicationFailure.nonRetryable('index is read-only', 'IndexRejected');
    });
    const handle = await engine.run('purgeDataset', { workflowId: workflowIds.purgeDataset(datasetId), input: { datasetId } });
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    const dataset = await store.db('datasets').where('id', datasetId).first();
    const events = await store.db('events').where({ dataset_id: datasetId });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event_type: 'dataset_delete_failed', organization_id: dataset.organization_id });
    expect(events[0].event_data).toMatchObject({ dataset_id: datasetId, message: 'index is read-only' });
  });

  it('purges an organization: hides its datasets, purges each, then deletes the organization row', async () => {
    const first = await seedDataset(store, lexical.index, 7);
    const { organization_id: organizationId } = await store.db('datasets').where('id', first).first();
    const [second] = await store.db('datasets').insert({ organization_id: organizationId, name: 'second', tracking_id: 'second' }).returning('id');
    await store.db('chunks').insert({ dataset_id: second.id, chunk_html: 'pelican' });
    await store.db('events').insert({ dataset_id: second.id, organization_id: organizationId, event_type: 'chunks_uploaded' });
    const bystander = await seedDataset(store, lexical.index, 2);

    const handle = await engine.run('purgeOrganization', {
      workflowId: workflowIds.purgeOrganization(organizationId),
      input: { organizationId, batchSize: 5 },
    });
    expect(await handle.result()).toEqual({ datasetsPurged: 2, chunksDeleted: 8 });
    expect(await count(store, 'organizations', { id: organizationId })).toBe(0);
    expect(await count(store, 'datasets', { organization_id: organizationId })).toBe(0);
    expect(await count(store, 'chunks', { dataset_id: first })).toBe(0);
    expect(await count(store, 'chunks', { dataset_id: second.id })).toBe(0);
    expect(await count(store, 'events', { organization_id: organizationId })).toBe(0);
    expect(await lexicalIds(config.lexical, store.db, first, 'pelican')).toEqual([]);
    expect(await count(store, 'chunks', { dataset_id: bystander })).toBe(2);
    if (engine.kind === 'in-process') {
      const steps = await store.db('job_steps').where('job_id', handle.workflowId).orderBy('seq');
      expect(steps.map((s) => s.activity)).toEqual([
        'retireOrganizationDatasets',
        'removeDatasetFromLexicalIndex',
        'deleteDatasetChunks',
        'deleteDatasetChunks',
        'deleteDatasetChunks',
        'deleteDatasetRow',
        'removeDatasetFromLexicalIndex',
        'deleteDatasetChunks',
        'deleteDatasetChunks',
        'deleteDatasetRow',
        'deleteOrganizationRow',
      ]);
    }
  });

  it('clears a dataset in batches, keeps it and reports the count as an event', async () => {
    const datasetId = await seedDataset(store, lexical.index, 5);
    const [group] = await store.db('chunk_groups').insert({ dataset_id: datasetId, name: 'g' }).returning('id');
    const chunk = await store.db('chunks').where({ dataset_id: datasetId }).first('id');
    await store.db('chunk_group_bookmarks').insert({ group_id: group.id, chunk_id: chunk.id });
    await store.db('files').insert({ dataset_id: datasetId, file_name: 'a.txt', size: 1 });
    const handle = await engine.run('clearDataset', { workflowId: workflowIds.clearDataset(datasetId), input: { datasetId, batchSize: 2 } });
    expect(await handle.result()).toEqual({ chunksDeleted: 5, groupsDeleted: 1, filesDeleted: 1 });
    expect(await count(store, 'datasets', { id: datasetId })).toBe(1);
    expect(await count(store, 'chunks', { dataset_id: datasetId })).toBe(0);
    expect(await lexicalIds(config.lexical, store.db, datasetId, 'pelican')).toEqual([]);
    const [event] = await store.db('events').where({ dataset_id: datasetId });
    expect(event).toMatchObject({ event_type: 'bulk_chunks_deleted', event_data: { chunks_deleted: 5 } });
  });

  it('clones a dataset in batches; a batch run twice copies nothing twice', async () => {
    const sourceId = await seedDataset(store, lexical.index, 7);
    const { organization_id } = await store.db('datasets').where('id', sourceId).first();
    const [target] = await store.db('datasets').insert({ organization_id, name: 'copy' }).returning('id');
    const handle = await engine.run('cloneDataset', {
      workflowId: workflowIds.cloneDataset(target.id),
      input: { sourceId, targetId: target.id, batchSize: 3 },
    });
    expect(await handle.result()).toEqual({ chunksCopied: 7, groupsCopied: 0, bookmarksCopied: 0, chunksIndexed: 7 });
    expect(await lexicalIds(config.lexical, store.db, target.id, 'pelican')).toHaveLength(7);

    // The same first batch again (a retry after a lost answer, say) inserts nothing new.
    const activities = createActivities({ store, lexical: lexical.index, storage });
    expect(await activities.copyDatasetChunks({ sourceId, targetId: target.id, afterId: null, batchSize: 3 })).toMatchObject({ count: 3 });
    expect(await count(store, 'chunks', { dataset_id: target.id })).toBe(7);
    // A deleted target stops the copy.
    await store.db('datasets').where('id', target.id).update({ deleted: 1 });
    expect(await activities.copyDatasetChunks({ sourceId, targetId: target.id, afterId: null, batchSize: 3 })).toEqual({ count: 0, lastId: null });
  });

  it.runIf(mode === 'full')('names Temporal when its health check fails', async () => {
    if (config.workflows.kind !== 'temporal') throw new Error('full mode runs on Temporal');
    const wrong = await createWorkflowEngine({ ...config.workflows, namespace: 'no-such-namespace' }, { store, lexical: lexical.index, storage });
    try {
      await expect(wrong.ping()).rejects.toThrow(/^Temporal at .+ \(namespace no-such-namespace\) failed its health check: .*not found/);
    } finally {
      await wrong.close();
    }
  });

  it('refuses a second start of a workflow id that is still running', async () => {
    const datasetId = await seedDataset(store, lexical.index, 2);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    lexical.hooks.set(datasetId, async () => {
      entered();
      await gate;
    });
    const workflowId = workflowIds.purgeDataset(datasetId);
    const first = await engine.run('purgeDataset', { workflowId, input: { datasetId } });
    await inside;
    const second = engine.run('purgeDataset', { workflowId, input: { datasetId } });
    await expect(second).rejects.toBeInstanceOf(WorkflowAlreadyRunningError);
    await expect(second).rejects.toThrow(`workflow ${workflowId} is already running`);
    release();
    expect(await first.result()).toEqual({ chunksDeleted: 2 });
    // Once finished, the id may be used again.
    const again = await engine.run('purgeDataset', { workflowId, input: { datasetId } });
    expect(await again.result()).toEqual({ chunksDeleted: 0 });
  });

  it('fails a workflow for good on bad input, with the reason', async () => {
    const workflowId = `purge-dataset-bad-${randomUUID()}`;
    const handle = await engine.run('purgeDataset', { workflowId, input: { datasetId: 'not-a-uuid' } });
    const failure = await handle.result().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as Error).message).toBe(`workflow ${workflowId} failed: purgeDataset: datasetId must be a UUID, got "not-a-uuid"`);
    if (engine.kind === 'in-process') {
      const job = await store.db('jobs').where('id', workflowId).first();
      expect(job).toMatchObject({ status: 'failed', error: 'purgeDataset: datasetId must be a UUID, got "not-a-uuid"' });
    }
  });
});

describe.runIf(mode === 'full')('Temporal engine restart', () => {
  it('a workflow interrupted by close() carries on with the next engine on the task queue', async () => {
    const config = await testConfig();
    const storage = await openFileStorage(config);
    const store = await openStore(config.store);
    const realIndex = await createLexicalIndex(config.lexical, store);
    const lexical = instrumented(realIndex);
    try {
      const datasetId = await seedDataset(store, lexical.index, 4);
      const workflowId = workflowIds.purgeDataset(datasetId);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      lexical.hooks.set(datasetId, async () => {
        entered();
        await gate;
      });
      const first = await createWorkflowEngine(config.workflows, { store, lexical: lexical.index, storage }, { shutdownGraceMs: 2000 });
      await first.start();
      const handle = await first.run('purgeDataset', { workflowId, input: { datasetId, batchSize: 3 } });
      await inside;
      // The running activity finishes within the grace time; the rest waits for the next worker.
      setTimeout(release, 100);
      await first.close();
      await expect(handle.result()).rejects.toBeInstanceOf(WorkflowInterruptedError);
      expect(await count(store, 'datasets', { id: datasetId })).toBe(1);

      const second = await createWorkflowEngine(config.workflows, { store, lexical: lexical.index, storage }, { shutdownGraceMs: 1000 });
      try {
        await second.start();
        await waitFor(async () => ((await count(store, 'datasets', { id: datasetId })) === 0 ? true : undefined));
        expect(await count(store, 'chunks', { dataset_id: datasetId })).toBe(0);
        expect(lexical.calls.get(datasetId)).toBe(1);
      } finally {
        await second.close();
      }
    } finally {
      await realIndex.close();
      await store.close();
    }
  });
});

describe(`in-process runner on ${mode === 'full' ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('resumes an unfinished job after a restart, replaying journaled steps without re-running them', async () => {
    const config = await testConfig();
    const storage = await openFileStorage(config);
    let store = await openStore(config.store);
    const realIndex = await createLexicalIndex(config.lexical, store);
    const lexical = instrumented(realIndex);
    try {
      const datasetId = await seedDataset(store, lexical.index, 10);
      const workflowId = workflowIds.purgeDataset(datasetId);

      // First life: stop the runner as soon as the first chunk batch (step 2) is journaled.
      let stopping: Promise<void> | undefined;
      const first = createInProcessEngine(
        { store, lexical: lexical.index, storage },
        {
          shutdownGraceMs: 1000,
          onStep: ({ seq }) => {
            if (seq === 2) stopping = first.close();
          },
        },
      );
      await first.start();
      const handle = await first.run('purgeDataset', { workflowId, input: { datasetId, batchSize: 3 } });
      await expect(handle.result()).rejects.toBeInstanceOf(WorkflowInterruptedError);
      await stopping;
      expect(await store.db('jobs').where('id', workflowId).first()).toMatchObject({ status: 'running', attempts: 1 });
      expect((await store.db('job_steps').where('job_id', workflowId)).length).toBe(2);
      expect(await count(store, 'chunks', { dataset_id: datasetId })).toBe(7);

      // Restart: a new store and runner on the same database.
      await store.close();
      store = await openStore(config.store);
      const executed: StepEvent[] = [];
      const second = createInProcessEngine({ store, lexical: lexical.index, storage }, { onStep: (e) => executed.push(e) });
      try {
        await second.start();
        const job = await waitFor(async () => {
          const row = await store.db('jobs').where('id', workflowId).first();
          return row.status === 'completed' || row.status === 'failed' ? row : undefined;
        });
        // 3 + 3 (journaled before the stop, not re-run) + 3 + 3 + 1 + 0.
        expect(job).toMatchObject({ status: 'completed', result: { chunksDeleted: 10 }, attempts: 2 });
        expect(executed.map((e) => [e.seq, e.activity])).toEqual([
          [3, 'deleteDatasetChunks'],
          [4, 'deleteDatasetChunks'],
          [5, 'deleteDatasetChunks'],
          [6, 'deleteDatasetChunks'],
          [7, 'deleteDatasetRow'],
        ]);
        expect(lexical.calls.get(datasetId)).toBe(1);
        expect(await count(store, 'chunks', { dataset_id: datasetId })).toBe(0);
        expect(await count(store, 'datasets', { id: datasetId })).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      await realIndex.close();
      await store.close();
    }
  });

  it('does not start a job before start(), and runs it once started', async () => {
    const config = await testConfig();
    const storage = await openFileStorage(config);
    const store = await openStore(config.store);
    const realIndex = await createLexicalIndex(config.lexical, store);
    const engine = createInProcessEngine({ store, lexical: realIndex, storage });
    try {
      const datasetId = await seedDataset(store, realIndex, 1);
      const handle = await engine.run('purgeDataset', { workflowId: workflowIds.purgeDataset(datasetId), input: { datasetId } });
      expect(await store.db('jobs').where('id', handle.workflowId).first()).toMatchObject({ status: 'pending', attempts: 0 });
      await engine.start();
      expect(await handle.result()).toEqual({ chunksDeleted: 1 });
    } finally {
      await engine.close();
      await realIndex.close();
      await store.close();
    }
  });
});
