// Several services without Temporal on one database: each job of the in-process runner is run by
// exactly one runner (a lease claimed by one conditional UPDATE, renewed while the job runs), and a
// job whose owner died is taken over: once its lease has run out, or at once when the owner was a
// process of this host that is gone. Real contention needs PostgreSQL (the full project: two stores,
// two connection pools, one database); PGlite is single-process, so the embedded project runs the
// same tests with both runners on its one connection, and the killed runner's database is reopened.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../server/config.js';
import { createLexicalIndex, type LexicalIndex } from '../../server/engines/lexical/index.js';
import { openFileStorage, type FileStorage } from '../../server/engines/storage/index.js';
import { createInProcessEngine, type InProcessOptions, type StepEvent } from '../../server/engines/workflows/inprocess.js';
import { openStore, type Store } from '../../server/store/db.js';
import { projectPath } from '../../scripts/contract/paths.js';
import { workflowIds } from '../../workflows/registry.js';
import { mode, testEnvironment } from '../support/env.js';
import { waitFor } from '../support/wait.js';

/** The real index, counting removeDataset calls and letting a test hold them. */
function counting(inner: LexicalIndex) {
  const calls = new Map<string, number>();
  const holds = new Map<string, Promise<void>>();
  const index: LexicalIndex = {
    ...inner,
    prepare: () => inner.prepare(),
    ping: () => inner.ping(),
    upsert: (d) => inner.upsert(d),
    remove: (d, ids) => inner.remove(d, ids),
    matchedWords: (request) => inner.matchedWords(request),
    close: () => inner.close(),
    removeDataset: async (datasetId) => {
      calls.set(datasetId, (calls.get(datasetId) ?? 0) + 1);
      await holds.get(datasetId);
      await inner.removeDataset(datasetId);
    },
  };
  return { index, calls, holds };
}

async function seed(store: Store, chunks: number): Promise<string> {
  const [org] = await store.db('organizations').insert({ name: 'lease test' }).returning('id');
  const [dataset] = await store.db('datasets').insert({ organization_id: org.id, name: 'purged' }).returning('id');
  await store.db('chunks').insert(Array.from({ length: chunks }, (_, i) => ({ id: randomUUID(), dataset_id: dataset.id, chunk_html: `lease ${i}` })));
  return dataset.id;
}

const finished = (store: Store, id: string) =>
  waitFor(async () => {
    const row = await store.db('jobs').where({ id }).first();
    return row?.status === 'completed' || row?.status === 'failed' ? row : undefined;
  });

/** Two stores on one database: two pools on PostgreSQL, the one PGlite connection twice in embedded mode. */
async function twoStores(config: Config): Promise<{ a: Store; b: Store; close(): Promise<void> }> {
  const a = await openStore(config.store);
  const b = mode === 'full' ? await openStore(config.store) : a;
  return { a, b, close: async () => void (await Promise.all([a.close(), b !== a ? b.close() : null])) };
}

/** Jobs recorded but held by no runner, as a service that has not started its runner leaves them. */
async function unownedJobs(store: Store, lexical: LexicalIndex, storage: FileStorage, datasets: string[]): Promise<string[]> {
  const creator = createInProcessEngine({ store, lexical, storage });
  const ids = [];
  for (const datasetId of datasets)
    ids.push((await creator.run('purgeDataset', { workflowId: workflowIds.purgeDataset(datasetId), input: { datasetId, batchSize: 2 } })).workflowId);
  await creator.close();
  return ids;
}

describe(`in-process runners sharing one database (${mode === 'full' ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('two runners started at once run each job exactly once', async () => {
    const config = loadConfig(await testEnvironment());
    const stores = await twoStores(config);
    const storage = await openFileStorage(config);
    const real = await createLexicalIndex(config.lexical, stores.a);
    const lexical = counting(real);
    const steps = new Map<string, string[]>();
    const record = (runner: string) => (e: StepEvent) => steps.set(`${e.jobId}#${e.seq}`, [...(steps.get(`${e.jobId}#${e.seq}`) ?? []), runner]);
    // Leases long enough that none runs out on a loaded machine: only the claims are contended here.
    const options: InProcessOptions = { leaseMs: 10_000, pollMs: 100 };
    const a = createInProcessEngine({ store: stores.a, lexical: lexical.index, storage }, { ...options, onStep: record('a') });
    const b = createInProcessEngine({ store: stores.b, lexical: lexical.index, storage }, { ...options, onStep: record('b') });
    try {
      const datasets = await Promise.all(Array.from({ length: 12 }, () => seed(stores.a, 5)));
      const jobs = await unownedJobs(stores.a, lexical.index, storage, datasets);
      if (mode === 'full') {
        // Real contention: the job rows stay locked until both runners' claims wait on them (more
        // claims than one runner's pool of 10 connections), so both runners claim the same jobs.
        const locker = await openStore(config.store);
        const trx = await locker.db.transaction();
        try {
          await trx('jobs').whereIn('id', jobs).forUpdate().select('id');
          await Promise.all([a.start(), b.start()]);
          await waitFor(async () => {
            const [{ n }] = (
              await locker.db.raw(
                `select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'update jobs set owner%'`,
              )
            ).rows;
            return Number(n) > 10 ? true : undefined;
          });
        } finally {
          await trx.commit();
          await locker.close();
        }
      } else {
        await Promise.all([a.start(), b.start()]);
      }
      for (const id of jobs) expect(await finished(stores.a, id)).toMatchObject({ status: 'completed', result: { chunksDeleted: 5 }, attempts: 1 });

      // Every activity call of every job ran once, in one runner: 1 index removal, 4 batches, 1 row.
      expect(steps.size).toBe(jobs.length * 6);
      for (const [step, runners] of steps) expect(runners, step).toHaveLength(1);
      for (const datasetId of datasets) expect(lexical.calls.get(datasetId)).toBe(1);
      const [{ n }] = await stores.a.db('datasets').whereIn('id', datasets).count({ n: '*' });
      expect(Number(n)).toBe(0);
      const byRunner = [...steps.values()].flat();
      console.info(`steps run by a: ${byRunner.filter((r) => r === 'a').length}, by b: ${byRunner.filter((r) => r === 'b').length}`);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await real.close();
      await stores.close();
    }
  });

  it('a live owner keeps its job past several lease lengths; an owner elsewhere loses it only when its lease runs out', async () => {
    const config = loadConfig(await testEnvironment());
    const stores = await twoStores(config);
    const storage = await openFileStorage(config);
    const real = await createLexicalIndex(config.lexical, stores.a);
    const lexical = counting(real);
    const options: InProcessOptions = { leaseMs: 1500, pollMs: 100 };
    const a = createInProcessEngine({ store: stores.a, lexical: lexical.index, storage }, options);
    const b = createInProcessEngine({ store: stores.b, lexical: lexical.index, storage }, options);
    try {
      await Promise.all([a.start(), b.start()]);
      // a holds a job for 5 s, more than three leases: its renewals keep it; b never runs it.
      const held = await seed(stores.a, 3);
      let release!: () => void;
      lexical.holds.set(held, new Promise<void>((r) => (release = r)));
      const handle = await a.run('purgeDataset', { workflowId: workflowIds.purgeDataset(held), input: { datasetId: held } });
      await new Promise((r) => setTimeout(r, 5000));
      expect(lexical.calls.get(held)).toBe(1);
      release();
      expect(await handle.result()).toEqual({ chunksDeleted: 3 });
      expect(await stores.a.db('jobs').where({ id: handle.workflowId }).first()).toMatchObject({ status: 'completed', attempts: 1, lease_expires_at: null });

      // A job held by a runner on another host (its pid cannot be asked): taken only after its lease.
      const orphan = await seed(stores.a, 2);
      const [job] = await unownedJobs(stores.a, lexical.index, storage, [orphan]).then(async (ids) => {
        await stores.a
          .db('jobs')
          .where({ id: ids[0] })
          .update({ owner: 'elsewhere/1:4242:deadbeef', status: 'running', lease_expires_at: stores.a.db.raw(`now() + interval '1500 milliseconds'`) });
        return ids;
      });
      const leaseEnd: Date = (await stores.a.db('jobs').where({ id: job }).first()).lease_expires_at;
      let releaseOrphan!: () => void;
      lexical.holds.set(orphan, new Promise<void>((r) => (releaseOrphan = r)));
      // Claimed (updated_at is the claim's time, on the database's clock) no sooner than the lease's end.
      const claimed = await waitFor(async () => {
        const row = await stores.a.db('jobs').where({ id: job }).first();
        return row.owner !== 'elsewhere/1:4242:deadbeef' ? row : undefined;
      });
      expect(claimed).toMatchObject({ status: 'running', attempts: 1 });
      expect(claimed.owner).toMatch(new RegExp(`:${process.pid}:[0-9a-f]{8}$`));
      expect(claimed.updated_at.getTime()).toBeGreaterThanOrEqual(leaseEnd.getTime());
      releaseOrphan();
      expect(await finished(stores.a, job)).toMatchObject({ status: 'completed', attempts: 1, result: { chunksDeleted: 2 } });
      expect(lexical.calls.get(orphan)).toBe(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await real.close();
      await stores.close();
    }
  });

  it('a runner whose lease was taken stops at its next activity, and its caller gets the result of the runner that took over', async () => {
    const config = loadConfig(await testEnvironment());
    const stores = await twoStores(config);
    const storage = await openFileStorage(config);
    const real = await createLexicalIndex(config.lexical, stores.a);
    const lexical = counting(real);
    const ran = { a: [] as number[], b: [] as number[] };
    const a = createInProcessEngine({ store: stores.a, lexical: lexical.index, storage }, { leaseMs: 5000, pollMs: 100, onStep: (e) => ran.a.push(e.seq) });
    const b = createInProcessEngine({ store: stores.b, lexical: lexical.index, storage }, { leaseMs: 5000, pollMs: 100, onStep: (e) => ran.b.push(e.seq) });
    try {
      await Promise.all([a.start(), b.start()]);
      const datasetId = await seed(stores.a, 6);
      let release!: () => void;
      lexical.holds.set(datasetId, new Promise<void>((r) => (release = r)));
      const handle = await a.run('purgeDataset', { workflowId: workflowIds.purgeDataset(datasetId), input: { datasetId, batchSize: 2 } });
      await waitFor(async () => (lexical.calls.get(datasetId) === 1 ? true : undefined));
      // As if a had stalled past its lease and a runner elsewhere had taken the job and died too:
      // the lease is free, so b takes the job and starts over from the journal (step 1 is not in it).
      await stores.a
        .db('jobs')
        .where({ id: handle.workflowId })
        .update({ owner: 'elsewhere/1:4242:deadbeef', lease_expires_at: stores.a.db.raw(`now() - interval '1 second'`) });
      await waitFor(async () => (lexical.calls.get(datasetId) === 2 ? true : undefined));
      release(); // a's step ends, and a finds the job no longer its own (at journaling, or renewal)
      expect(await handle.result()).toEqual({ chunksDeleted: 6 });
      // The step under way when a lost the job ran in both (at least once, as under Temporal); a ran no other.
      expect(ran.a.filter((seq) => seq !== 1)).toEqual([]);
      expect(ran.b.filter((seq) => seq !== 1)).toEqual([2, 3, 4, 5, 6]);
      expect(await stores.a.db('jobs').where({ id: handle.workflowId }).first()).toMatchObject({ status: 'completed', attempts: 2 });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await real.close();
      await stores.close();
    }
  });

  it('a runner killed holding a job: a runner on the same host takes it at once, before the lease runs out', async () => {
    const env = await testEnvironment();
    const child = spawn(process.execPath, ['--import', 'tsx', projectPath('test/engines/job-leases.runner.ts')], {
      env: { ...process.env, ...env, LEASE_MS: '120000' },
      cwd: projectPath(''),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    let started: { datasetId: string; workflowId: string } | undefined;
    for await (const line of createInterface({ input: child.stdout! })) {
      started = JSON.parse(line);
      break;
    }
    expect(started, stderr).toBeDefined();
    const exit = once(child, 'exit');
    child.kill('SIGKILL');
    await exit;

    const config = loadConfig(env);
    const store = await openStore(config.store);
    const storage = await openFileStorage(config);
    const real = await createLexicalIndex(config.lexical, store);
    const runner = createInProcessEngine({ store, lexical: real, storage }, { pollMs: 100 });
    try {
      const before = await store.db('jobs').where({ id: started!.workflowId }).first();
      expect(before).toMatchObject({ status: 'running', attempts: 1 });
      expect(before.owner).toMatch(new RegExp(`:${child.pid}:[0-9a-f]{8}$`));
      expect(before.lease_expires_at.getTime()).toBeGreaterThan(Date.now() + 60_000); // the dead owner's lease still runs
      await runner.start();
      expect(await finished(store, started!.workflowId)).toMatchObject({ status: 'completed', attempts: 2, result: { chunksDeleted: 4 } });
    } finally {
      await runner.close();
      await real.close();
      await store.close();
    }
  });
});
