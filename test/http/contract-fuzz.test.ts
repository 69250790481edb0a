// The contract, fuzzed: schemathesis sends positive and negative requests for every operation
// (its coverage, fuzzing and stateful phases, every check) to a service with an owner key, an
// organization and a dataset, and must find no server error, no undeclared status, no response
// that departs from its schema. Bounded by the examples per operation (about a minute or two a mode
// on 2 cores); FUZZ_EXAMPLES and FUZZ_SEED change the bound and the seed.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { installFuzz } from '../../scripts/services/fuzz.js';
import { describeFuzz, runContractFuzz, type FuzzTarget } from '../support/fuzz.js';
import { mode } from '../support/env.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let schemathesis: string;
let target: FuzzTarget;

/** The run's user's role and scopes in its organizations. */
async function membership(apiKey: string) {
  const me = await service.request('GET', '/api/auth/me', { headers: { authorization: apiKey } });
  return (me.body.user_orgs ?? []).map((m: { organization_id: string; role: number; scopes: unknown }) => ({
    organization_id: m.organization_id,
    role: m.role,
    scopes: m.scopes,
  }));
}
let membershipBefore: unknown;

beforeAll(async () => {
  [schemathesis, service] = await Promise.all([installFuzz(), startTestService()]);
  // An API-only user: an owner key that is also a user's, so the user operations answer too.
  const user = await service.request('POST', '/api/auth/create_api_only_user', {
    headers: { authorization: ADMIN_KEY },
    body: { user_email: 'fuzz@example.com', user_name: 'Fuzz' },
  });
  expect(user.status, JSON.stringify(user.body)).toBe(200);
  const apiKey: string = user.body.api_key;
  const organizationId: string = user.body.user.orgs[0].id;
  const dataset = await service.request('POST', '/api/dataset', {
    headers: { authorization: apiKey, 'SVC-Organization': organizationId },
    body: { dataset_name: 'fuzzed' },
  });
  const keys = await service.request('GET', '/api/user/api_key', { headers: { authorization: apiKey } });
  target = {
    url: service.url,
    apiKey,
    organizationId,
    datasetId: dataset.body.id,
    protectedIds: [organizationId, dataset.body.id, user.body.user.id, ...keys.body.map((k: { id: string }) => k.id)],
  };
  membershipBefore = await membership(apiKey);
  expect(membershipBefore).toEqual([expect.objectContaining({ organization_id: organizationId, role: 2 })]);
});
afterAll(async () => {
  await service?.stop();
});

it(`schemathesis finds no failure (${mode} mode)`, async () => {
  const result = await runContractFuzz(schemathesis, target, {
    maxExamples: Number(process.env.FUZZ_EXAMPLES ?? 5),
    seed: Number(process.env.FUZZ_SEED ?? 20261123),
    workers: Number(process.env.FUZZ_WORKERS ?? 4),
    // Generous: on a machine that ran the service slowly (2026-11-29), the embedded run was not done at 6 minutes.
    killAfterMs: 900_000,
  });
  const summary = describeFuzz(result);
  console.log(summary);
  expect(result.timedOut, summary).toBe(false);
  expect(result.failures, summary).toEqual([]);
  expect(result.errors, summary).toEqual([]);
  expect(result.operations.tested, summary).toBe(result.operations.total);
  expect(result.exitCode, summary).toBe(0);
  // The run kept its footing to the end: its key, its owner role and every route (fuzz/hooks.py).
  expect(await membership(target.apiKey), summary).toEqual(membershipBefore);
  // Reached only when every check passed: a failing run keeps its reports for inspection.
  await rm(result.reportDir, { recursive: true, force: true });
}, 960_000);
