// The Experiment operations over HTTP: creating, listing, reading, changing and deleting a dataset's
// A/B experiments; putting users in a treatment (the same user always the same treatment, 10,000
// users in the shares of the split, each first assignment recorded); experiments of another dataset
// out of reach; bad input refused with nothing recorded; the owner role.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  abTest,
  createDataset,
  createExperiment,
  createOrganization,
  createOrganizationApiKey,
  deleteExperiment,
  getExperiment,
  getExperiments,
  updateExperiment,
} from '../../sdk/src/generated/sdk.gen.js';
import type { Experiment, ExperimentConfig } from '../../sdk/src/generated/types.gen.js';
import { assignTreatment } from '../../server/domain/experiments/assignment.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
let datasetId: string;
let otherDatasetId: string;
const db = () => service.services.store.db;
const client = (key = ADMIN_KEY) => service.client(key);
const ds = (id: string) => ({ 'SVC-Dataset': id });
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const CONFIG: ExperimentConfig = { area: 'search bar', control_name: 'keyword', control_split: 0.7, t1_name: 'hybrid', t1_split: 0.3 };

async function newDataset(name: string): Promise<string> {
  const { data } = await createDataset({ client: client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: name }, throwOnError: true });
  return data.id;
}

async function newExperiment(name: string, config: ExperimentConfig = CONFIG, dataset = datasetId): Promise<Experiment> {
  const { data, response, error } = await createExperiment({ client: client(), headers: ds(dataset), body: { name, experiment_config: config } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

async function treatmentOf(experimentId: string, userId: string, dataset = datasetId, key = ADMIN_KEY): Promise<string> {
  const { data, response, error } = await abTest({ client: client(key), headers: ds(dataset), body: { experiment_id: experimentId, user_id: userId } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  expect(data).toMatchObject({ experiment_id: experimentId, user_id: userId });
  return data!.treatment_name;
}

const send = (method: string, path: string, body: unknown, dataset = datasetId, key = ADMIN_KEY) =>
  service.request(method, path, { headers: { authorization: key, ...ds(dataset) }, body });

const stored = (experimentId: string) => db()('experiments').where({ id: experimentId }).first();
const assignments = (experimentId: string) =>
  db()('experiment_user_assignments').where({ experiment_id: experimentId }).orderBy('user_id').select('user_id', 'treatment_name', 'dataset_id');
const allRows = async () => ({
  experiments: await db()('experiments').orderBy('id'),
  assignments: await db()('experiment_user_assignments').orderBy('id'),
});

async function ownerKey(role: 0 | 1 | 2): Promise<string> {
  const { data } = await createOrganizationApiKey({
    client: client(),
    headers: { 'SVC-Organization': orgId },
    body: { name: `role ${role}`, role },
    throwOnError: true,
  });
  return data.api_key;
}

beforeAll(async () => {
  service = await startTestService();
  orgId = (await createOrganization({ client: client(), body: { name: 'Experiments' }, throwOnError: true })).data.id;
  datasetId = await newDataset('shop search');
  otherDatasetId = await newDataset('help centre');
}, 60_000);

afterAll(async () => {
  await service?.stop();
});

describe('creating an experiment', () => {
  it('stores it in the dataset with its treatments and shares, names trimmed', async () => {
    const experiment = await newExperiment('  Hybrid vs keyword ', { ...CONFIG, area: ' search bar ', t1_name: ' hybrid ' });
    expect(experiment).toMatchObject({
      name: 'Hybrid vs keyword',
      area: 'search bar',
      control_name: 'keyword',
      control_split: 0.7,
      t1_name: 'hybrid',
      t1_split: 0.3,
      dataset_id: datasetId,
    });
    expect(experiment.created_at).toMatch(TIMESTAMP);
    expect(experiment.updated_at).toBe(experiment.created_at);
    expect(await stored(experiment.id)).toMatchObject({ dataset_id: datasetId, name: 'Hybrid vs keyword', t1_name: 'hybrid', t1_split: 0.3 });
    const { data } = await getExperiment({ client: client(), headers: ds(datasetId), path: { experiment_id: experiment.id }, throwOnError: true });
    expect(data).toEqual(experiment);
  });

  it('works with an owner key of the organization, and refuses admin and read keys', async () => {
    const owner = await ownerKey(2);
    const { response } = await createExperiment({ client: client(owner), headers: ds(datasetId), body: { name: 'by the owner', experiment_config: CONFIG } });
    expect(response.status).toBe(200);
    const before = await allRows();
    for (const key of [await ownerKey(1), await ownerKey(0)]) {
      const created = await createExperiment({ client: client(key), headers: ds(datasetId), body: { name: 'by an admin', experiment_config: CONFIG } });
      expect(created.response.status).toBe(403);
      expect(created.error!.message).toMatch(/owner/);
      expect((await getExperiments({ client: client(key), headers: ds(datasetId) })).response.status).toBe(403);
      const experiment = before.experiments[0];
      for (const reply of [
        await send('GET', `/api/experiment/${experiment.id}`, undefined, datasetId, key),
        await send('PUT', '/api/experiment', { id: experiment.id, name: 'taken over' }, datasetId, key),
        await send('POST', '/api/experiment/ab-test', { experiment_id: experiment.id, user_id: 'u' }, datasetId, key),
        await send('DELETE', `/api/experiment/${experiment.id}`, undefined, datasetId, key),
      ]) {
        expect(reply.status).toBe(403);
      }
    }
    expect(await allRows()).toEqual(before);
  });

  it('refuses bad input with a message naming the problem, and records nothing', async () => {
    const before = await allRows();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ experiment_config: CONFIG }, /name/],
      [{ name: '   ', experiment_config: CONFIG }, /name must have more than white space/],
      [{ name: 'x' }, /experiment_config/],
      [{ name: 'x', experiment_config: { ...CONFIG, t1_split: 0.2 } }, /control_split and t1_split must add up to 1, they add up to 0\.9/],
      [{ name: 'x', experiment_config: { ...CONFIG, control_split: 1.3, t1_split: -0.3 } }, /control_split/],
      [{ name: 'x', experiment_config: { ...CONFIG, t1_split: '0.3' } }, /t1_split/],
      [{ name: 'x', experiment_config: { ...CONFIG, t1_name: 'keyword' } }, /control_name and t1_name must differ/],
      [{ name: 'x', experiment_config: { ...CONFIG, control_name: ' ' } }, /experiment_config\.control_name must have more than white space/],
      [{ name: 'x', experiment_config: { ...CONFIG, area: undefined } }, /area/],
    ];
    for (const [body, message] of cases) {
      const reply = await send('POST', '/api/experiment', body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await send('POST', '/api/experiment', { name: 'x', experiment_config: CONFIG }, UNKNOWN)).status).toBe(404);
    expect(await allRows()).toEqual(before);
  });
});

describe("a dataset's experiments", () => {
  it('lists those of the dataset, the oldest first, and reads each', async () => {
    const dataset = await newDataset('listing');
    const emptyAtFirst = await getExperiments({ client: client(), headers: ds(dataset), throwOnError: true });
    expect(emptyAtFirst.data).toEqual([]);
    const first = await newExperiment('first', CONFIG, dataset);
    const second = await newExperiment('second', { ...CONFIG, control_split: 0.5, t1_split: 0.5 }, dataset);
    await newExperiment('elsewhere', CONFIG, otherDatasetId);
    const { data } = await getExperiments({ client: client(), headers: ds(dataset), throwOnError: true });
    expect(data).toEqual([first, second]);
    const elsewhere = await getExperiments({ client: client(), headers: ds(otherDatasetId), throwOnError: true });
    expect(elsewhere.data.map((e) => e.name)).toContain('elsewhere');
    expect(elsewhere.data.every((e) => e.dataset_id === otherDatasetId)).toBe(true);
  });

  it("answers 404 for an unknown experiment and for another dataset's, alike", async () => {
    const experiment = await newExperiment('private');
    const foreign = await send('GET', `/api/experiment/${experiment.id}`, undefined, otherDatasetId);
    const unknown = await send('GET', `/api/experiment/${UNKNOWN}`, undefined, datasetId);
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body.message.replace(experiment.id, '<id>')).toBe(unknown.body.message.replace(UNKNOWN, '<id>'));
    const bad = await send('GET', '/api/experiment/not-a-uuid', undefined);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/experiment_id/);
  });
});

describe('changing an experiment', () => {
  it('renames it, or replaces its configuration, and moves updated_at only when something changed', async () => {
    const experiment = await newExperiment('before');
    const same = await updateExperiment({ client: client(), headers: ds(datasetId), body: { id: experiment.id, name: 'before', experiment_config: CONFIG } });
    expect(same.data).toEqual(experiment);
    await new Promise((resolve) => setTimeout(resolve, 5));

    const renamed = await updateExperiment({ client: client(), headers: ds(datasetId), body: { id: experiment.id, name: ' after ' }, throwOnError: true });
    expect(renamed.data).toMatchObject({ ...CONFIG, name: 'after', created_at: experiment.created_at });
    expect(renamed.data.updated_at > experiment.updated_at).toBe(true);

    const config = { area: 'chat', control_name: 'gpt', control_split: 0.25, t1_name: 'local', t1_split: 0.75 };
    const changed = await updateExperiment({
      client: client(),
      headers: ds(datasetId),
      body: { id: experiment.id, experiment_config: config },
      throwOnError: true,
    });
    expect(changed.data).toMatchObject({ ...config, name: 'after' });
    const { data } = await getExperiment({ client: client(), headers: ds(datasetId), path: { experiment_id: experiment.id }, throwOnError: true });
    expect(data).toEqual(changed.data);
    const nulls = await updateExperiment({
      client: client(),
      headers: ds(datasetId),
      body: { id: experiment.id, name: null, experiment_config: null },
      throwOnError: true,
    });
    expect(nulls.data).toEqual(changed.data);
  });

  it('renames a renamed treatment in the recorded assignments, two names swapped included', async () => {
    const experiment = await newExperiment('swap', { ...CONFIG, control_split: 0.5, t1_split: 0.5 });
    const users = Array.from({ length: 40 }, (_, i) => `swapper-${i}`);
    const before = new Map<string, string>();
    for (const user of users) before.set(user, await treatmentOf(experiment.id, user));
    expect(new Set(before.values())).toEqual(new Set(['keyword', 'hybrid']));

    const swapped = { ...CONFIG, control_name: 'hybrid', t1_name: 'keyword', control_split: 0.5, t1_split: 0.5 };
    await updateExperiment({ client: client(), headers: ds(datasetId), body: { id: experiment.id, experiment_config: swapped }, throwOnError: true });
    const other = (name: string) => (name === 'keyword' ? 'hybrid' : 'keyword');
    for (const user of users) expect(await treatmentOf(experiment.id, user)).toBe(other(before.get(user)!));
    expect(await assignments(experiment.id)).toEqual(
      users.toSorted().map((user) => ({ user_id: user, treatment_name: other(before.get(user)!), dataset_id: datasetId })),
    );

    await updateExperiment({
      client: client(),
      headers: ds(datasetId),
      body: { id: experiment.id, experiment_config: { ...swapped, t1_name: 'lexical' } },
      throwOnError: true,
    });
    const names = (await assignments(experiment.id)).map((a) => a.treatment_name);
    expect(new Set(names)).toEqual(new Set(['hybrid', 'lexical']));
  });

  it("refuses bad input, an unknown experiment and another dataset's, changing nothing", async () => {
    const experiment = await newExperiment('guarded');
    const before = await allRows();
    const cases: [string, Record<string, unknown>, number, RegExp][] = [
      [datasetId, { name: 'x' }, 400, /id/],
      [datasetId, { id: 'nope', name: 'x' }, 400, /id/],
      [datasetId, { id: experiment.id, name: ' ' }, 400, /name must have more than white space/],
      [datasetId, { id: experiment.id, name: '' }, 400, /name/],
      [datasetId, { id: experiment.id, experiment_config: { ...CONFIG, control_split: 0.9 } }, 400, /add up to 1/],
      [datasetId, { id: experiment.id, experiment_config: { area: 'x' } }, 400, /experiment_config/],
      [datasetId, { id: experiment.id, name: 'ok', experiment_config: { ...CONFIG, t1_name: ' keyword' } }, 400, /must differ/],
      [datasetId, { id: UNKNOWN, name: 'x' }, 404, new RegExp(UNKNOWN)],
      [otherDatasetId, { id: experiment.id, name: 'taken over' }, 404, new RegExp(experiment.id)],
    ];
    for (const [dataset, body, status, message] of cases) {
      const reply = await send('PUT', '/api/experiment', body, dataset);
      expect(reply.status, JSON.stringify(body)).toBe(status);
      expect(reply.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await allRows()).toEqual(before);
  });
});

describe('putting users in a treatment', () => {
  it('gives the same user the same treatment every time, and records the assignment once', async () => {
    const experiment = await newExperiment('sticky');
    const first = await treatmentOf(experiment.id, 'visitor-42');
    expect(first).toBe(assignTreatment(experiment.id, 'visitor-42', CONFIG));
    for (let i = 0; i < 5; i++) expect(await treatmentOf(experiment.id, 'visitor-42')).toBe(first);
    const rows = await db()('experiment_user_assignments').where({ experiment_id: experiment.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ user_id: 'visitor-42', treatment_name: first, dataset_id: datasetId });
    expect(rows[0].created_at).toBeInstanceOf(Date);
  });

  it('puts 2,000 users in the shares of the split, as the ids choose, each recorded', { timeout: 300_000 }, async () => {
    const experiment = await newExperiment('ten thousand', { ...CONFIG, control_split: 0.7, t1_split: 0.3 });
    // The split's precision is the unit tests' (10,000 ids); here every answer is checked against it.
    const users = Array.from({ length: 2_000 }, (_, i) => `shopper-${i}`);
    const answers = new Map<string, string>();
    const workers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = w; i < users.length; i += 16) answers.set(users[i], await treatmentOf(experiment.id, users[i]));
    });
    await Promise.all(workers);
    const control = [...answers.values()].filter((t) => t === 'keyword').length / users.length;
    expect(Math.abs(control - 0.7)).toBeLessThan(0.045);
    expect([...answers.values()].every((t) => t === 'keyword' || t === 'hybrid')).toBe(true);
    for (const user of users) expect(answers.get(user)).toBe(assignTreatment(experiment.id, user, CONFIG));
    const recorded = await assignments(experiment.id);
    expect(recorded).toHaveLength(users.length);
    for (const row of recorded) expect(row.treatment_name).toBe(answers.get(row.user_id));
    // Asked again, each of a sample answers as before.
    for (const user of users.slice(0, 200)) expect(await treatmentOf(experiment.id, user)).toBe(answers.get(user));
  });

  it('keeps assigned users in their treatment when the shares change; new users get the new shares', async () => {
    const experiment = await newExperiment('reshared', { ...CONFIG, control_split: 0.5, t1_split: 0.5 });
    const early = Array.from({ length: 30 }, (_, i) => `early-${i}`);
    const before = new Map<string, string>();
    for (const user of early) before.set(user, await treatmentOf(experiment.id, user));
    expect([...before.values()]).toContain('keyword');
    await updateExperiment({
      client: client(),
      headers: ds(datasetId),
      body: { id: experiment.id, experiment_config: { ...CONFIG, control_split: 0, t1_split: 1 } },
      throwOnError: true,
    });
    for (const user of early) expect(await treatmentOf(experiment.id, user)).toBe(before.get(user));
    for (let i = 0; i < 30; i++) expect(await treatmentOf(experiment.id, `late-${i}`)).toBe('hybrid');
  });

  it('gives a user independent treatments in two experiments', async () => {
    const one = await newExperiment('one', { ...CONFIG, control_split: 0.5, t1_split: 0.5 });
    const two = await newExperiment('two', { ...CONFIG, control_split: 0.5, t1_split: 0.5 });
    let same = 0;
    for (let i = 0; i < 200; i++) if ((await treatmentOf(one.id, `both-${i}`)) === (await treatmentOf(two.id, `both-${i}`))) same += 1;
    expect(same).toBeGreaterThan(60);
    expect(same).toBeLessThan(140);
  });

  it("refuses bad input, an unknown experiment and another dataset's, recording nothing", async () => {
    const experiment = await newExperiment('out of reach');
    const before = await allRows();
    const cases: [string, Record<string, unknown>, number, RegExp][] = [
      [datasetId, { experiment_id: experiment.id }, 400, /user_id/],
      [datasetId, { experiment_id: experiment.id, user_id: '' }, 400, /user_id/],
      [datasetId, { experiment_id: experiment.id, user_id: 12 }, 400, /user_id/],
      [datasetId, { user_id: 'u' }, 400, /experiment_id/],
      [datasetId, { experiment_id: 'nope', user_id: 'u' }, 400, /experiment_id/],
      [datasetId, { experiment_id: UNKNOWN, user_id: 'u' }, 404, new RegExp(UNKNOWN)],
      [otherDatasetId, { experiment_id: experiment.id, user_id: 'u' }, 404, new RegExp(experiment.id)],
    ];
    for (const [dataset, body, status, message] of cases) {
      const reply = await send('POST', '/api/experiment/ab-test', body, dataset);
      expect(reply.status, JSON.stringify(body)).toBe(status);
      expect(reply.body.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await allRows()).toEqual(before);
  });
});

describe('deleting an experiment', () => {
  it('deletes it with its assignments, and only it', async () => {
    const doomed = await newExperiment('doomed');
    const kept = await newExperiment('kept');
    await treatmentOf(doomed.id, 'someone');
    await treatmentOf(kept.id, 'someone');
    const foreign = await deleteExperiment({ client: client(), headers: ds(otherDatasetId), path: { experiment_id: doomed.id } });
    expect(foreign.response.status).toBe(404);
    expect(await stored(doomed.id)).toBeDefined();

    const { response } = await deleteExperiment({ client: client(), headers: ds(datasetId), path: { experiment_id: doomed.id } });
    expect(response.status).toBe(204);
    expect(await stored(doomed.id)).toBeUndefined();
    expect(await assignments(doomed.id)).toEqual([]);
    expect(await assignments(kept.id)).toHaveLength(1);
    expect((await getExperiment({ client: client(), headers: ds(datasetId), path: { experiment_id: doomed.id } })).response.status).toBe(404);
    expect((await send('POST', '/api/experiment/ab-test', { experiment_id: doomed.id, user_id: 'someone' })).status).toBe(404);
    const again = await deleteExperiment({ client: client(), headers: ds(datasetId), path: { experiment_id: doomed.id } });
    expect(again.response.status).toBe(404);
  });

  it("goes with its dataset's deletion", async () => {
    const dataset = await newDataset('short-lived');
    const experiment = await newExperiment('with the dataset', CONFIG, dataset);
    await treatmentOf(experiment.id, 'visitor', dataset);
    await db()('datasets').where({ id: dataset }).delete();
    expect(await stored(experiment.id)).toBeUndefined();
    expect(await assignments(experiment.id)).toEqual([]);
  });
});
