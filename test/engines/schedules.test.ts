// Schedules of the workflow engine seam: the in-process runner (its schedules in the database) in
// the embedded project, Temporal Schedules in the full one. A scheduled workflow runs every period,
// goes on after the engine is closed and another started on the same database or task queue, and
// stops when unscheduled; scheduling the same id again replaces the schedule.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../server/config.js';
import { createLexicalIndex, type LexicalIndex } from '../../server/engines/lexical/index.js';
import { openFileStorage, type FileStorage } from '../../server/engines/storage/index.js';
import { createWorkflowEngine, type WorkflowEngine } from '../../server/engines/workflows/index.js';
import { openStore, type Store } from '../../server/store/db.js';
import { mode, testConfig } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const EVERY_MS = 2000;

describe(`workflow schedules (${mode})`, () => {
  let config: Config;
  let store: Store;
  let lexical: LexicalIndex;
  let storage: FileStorage;
  const engines: WorkflowEngine[] = [];

  const openEngine = async () => {
    const engine = await createWorkflowEngine(config.workflows, { store, lexical, storage }, { shutdownGraceMs: 1000, pollMs: 200 });
    engines.push(engine);
    await engine.start();
    return engine;
  };
  /** The runs so far: each clear of the dataset records one event. */
  const runs = async (datasetId: string) => Number((await store.db('events').where({ dataset_id: datasetId }).count({ n: '*' }))[0].n);

  beforeAll(async () => {
    config = await testConfig();
    store = await openStore(config.store);
    storage = await openFileStorage(config);
    lexical = await createLexicalIndex(config.lexical, store);
  });

  afterAll(async () => {
    for (const engine of engines) await engine.close();
    await lexical?.close();
    await store?.close();
  });

  it('runs a workflow every period, across a restart of the engine, until unscheduled', async () => {
    const [org] = await store.db('organizations').insert({ name: 'schedules' }).returning('id');
    const [dataset] = await store.db('datasets').insert({ organization_id: org.id, name: 'cleared on a schedule' }).returning('id');
    const scheduleId = `test-schedule-${randomUUID()}`;
    const first = await openEngine();
    const before = Date.now();
    const next = await first.schedule('clearDataset', {
      scheduleId,
      workflowId: `clear-dataset-${dataset.id}`,
      input: { datasetId: dataset.id },
      everyMs: EVERY_MS,
    });
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime()).toBeLessThanOrEqual(before + EVERY_MS + 1000);
    expect(await runs(dataset.id)).toBe(0);
    await waitFor(async () => ((await runs(dataset.id)) >= 1 ? true : undefined), 20_000);

    await first.close();
    const atRestart = await runs(dataset.id);
    const second = await openEngine();
    await waitFor(async () => ((await runs(dataset.id)) > atRestart ? true : undefined), 20_000);

    await second.unschedule(scheduleId);
    await second.unschedule(scheduleId); // none left: no error
    // A run already starting may still finish; after it, none.
    await new Promise((resolve) => setTimeout(resolve, EVERY_MS + 500));
    const stopped = await runs(dataset.id);
    await new Promise((resolve) => setTimeout(resolve, 2 * EVERY_MS + 500));
    expect(await runs(dataset.id)).toBe(stopped);
  }, 90_000);

  it('replaces a schedule scheduled again under the same id', async () => {
    const engine = await openEngine();
    const scheduleId = `test-schedule-${randomUUID()}`;
    const input = { datasetId: randomUUID() };
    const soon = await engine.schedule('purgeDataset', { scheduleId, workflowId: `purge-dataset-${input.datasetId}`, input, everyMs: 60_000 });
    const later = await engine.schedule('purgeDataset', { scheduleId, workflowId: `purge-dataset-${input.datasetId}`, input, everyMs: 3_600_000 });
    expect(later.getTime() - soon.getTime()).toBeGreaterThan(3_000_000);
    await engine.unschedule(scheduleId);
  });
});
