// The Organization operations: update, delete (at once unusable, then purged), members, usage, keys
// and the organization-wide dataset configuration change.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiOnlyUser,
  createChunk,
  createOrganization,
  createOrganizationApiKey,
  deleteOrganization,
  deleteOrganizationApiKey,
  getFilesCursorHandler,
  getMe,
  getOrganization,
  getOrganizationApiKeys,
  getOrganizationUsage,
  getOrganizationUsers,
  postInvitation,
  updateAllOrgDatasetConfigs,
  updateOrganization,
} from '../../sdk/src/generated/sdk.gen.js';
import { seedChunk, seedDataset, seedFile } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
const db = () => service.services.store.db;
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';

async function newOrg(name = 'Org'): Promise<string> {
  const { data, response } = await createOrganization({ client: service.client(), body: { name } });
  expect(response.status).toBe(200);
  return data!.id;
}

async function newKey(organizationId: string, role: 0 | 1 | 2, extra: Record<string, unknown> = {}, creator = ADMIN_KEY): Promise<string> {
  const { data, response } = await createOrganizationApiKey({
    client: service.client(creator),
    headers: { 'SVC-Organization': organizationId },
    body: { name: `role ${role}`, role, ...extra },
  });
  expect(response.status).toBe(200);
  return data!.api_key;
}

/** A user who is a member of `organizationId` with `role`, and that user's key for it. */
async function newMember(organizationId: string, role: 0 | 1 | 2, email: string): Promise<{ userId: string; key: string }> {
  const invited = await postInvitation({
    client: service.client(),
    headers: { 'SVC-Organization': organizationId },
    body: { email, user_role: role, app_url: 'https://app.example', redirect_uri: 'https://app.example/done' },
  });
  expect(invited.response.status).toBe(204);
  const { data, response } = await createApiOnlyUser({
    client: service.client(await newKey(organizationId, 2)),
    body: { user_email: email, user_name: email.split('@')[0] },
  });
  expect(response.status).toBe(200);
  return { userId: data!.user.id, key: data!.api_key };
}

function raw(method: string, path: string, organizationId: string, body?: unknown, key = ADMIN_KEY) {
  return service.request(method, path, { headers: { authorization: key, 'SVC-Organization': organizationId }, body });
}

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

describe('POST /api/organization', () => {
  it('only the instance administrator creates organizations', async () => {
    const org = await newOrg('Maker');
    const owner = await newKey(org, 2);
    const { response, error } = await createOrganization({ client: service.client(owner), body: { name: 'Another' } });
    expect(response.status).toBe(403);
    expect(error!.message).toMatch(/administrator/);
    expect((await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 5 } })).status).toBe(400);
    expect((await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: '' } })).status).toBe(400);
  });
});

describe('PUT /api/organization', () => {
  it('renames the organization and sets its partner configuration; missing fields keep their value', async () => {
    const org = await newOrg('Before');
    const owner = await newKey(org, 2);
    const headers = { 'SVC-Organization': org };
    const renamed = await updateOrganization({
      client: service.client(owner),
      headers,
      body: { name: 'After', partner_configuration: { COMPANY_NAME: 'After Inc' } },
    });
    expect(renamed.response.status).toBe(200);
    expect(renamed.data).toMatchObject({ id: org, name: 'After', partner_configuration: { COMPANY_NAME: 'After Inc' }, deleted: 0 });

    const kept = await updateOrganization({ client: service.client(owner), headers, body: { partner_configuration: null } });
    expect(kept.data).toMatchObject({ name: 'After', partner_configuration: { COMPANY_NAME: 'After Inc' } });
    const cleared = await updateOrganization({ client: service.client(owner), headers, body: { partner_configuration: {} } });
    expect(cleared.data!.partner_configuration).toEqual({});

    const fetched = await getOrganization({ client: service.client(), headers, path: { organization_id: org } });
    expect(fetched.data!.organization.name).toBe('After');
  });

  it('needs the owner role, the own organization and well-typed fields', async () => {
    const org = await newOrg('Guarded');
    const admin = await newKey(org, 1);
    const low = await updateOrganization({ client: service.client(admin), headers: { 'SVC-Organization': org }, body: { name: 'x' } });
    expect(low.response.status).toBe(403);
    expect(low.error!.message).toMatch(/owner/);

    const foreign = await newKey(await newOrg('Elsewhere'), 2);
    expect((await updateOrganization({ client: service.client(foreign), headers: { 'SVC-Organization': org }, body: { name: 'x' } })).response.status).toBe(
      404,
    );

    expect((await raw('PUT', '/api/organization', org, { name: 42 })).status).toBe(400);
    expect((await raw('PUT', '/api/organization', org, { partner_configuration: { COMPANY_NAME: 3 } })).status).toBe(400);
    const blank = await raw('PUT', '/api/organization', org, { name: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.body.message).toMatch(/name/);
    expect((await raw('PUT', '/api/organization', UNKNOWN, { name: 'x' })).status).toBe(404);
    expect((await raw('PUT', '/api/organization', 'not-a-uuid', { name: 'x' })).status).toBe(400);
    const unchanged = await getOrganization({ client: service.client(), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(unchanged.data!.organization.name).toBe('Guarded');
  });
});

describe('DELETE /api/organization/{organization_id}', () => {
  it('makes the organization, its keys and its datasets unusable at once, then purges it', async () => {
    const org = await newOrg('Doomed');
    const keeper = await newOrg('Keeper');
    const dataset = await seedDataset(db(), org);
    await seedChunk(db(), dataset.id);
    const admin = await newKey(org, 1);
    const reader = await newKey(org, 0);
    const member = await newMember(org, 1, 'doomed-member@example.com');
    await db()('invitations').insert({ organization_id: org, email: 'pending@example.com', role: 0 });

    const { response } = await deleteOrganization({ client: service.client(admin), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(response.status).toBe(204);

    // At once: keys of the organization are refused, the administrator sees nothing of it.
    for (const key of [admin, reader]) {
      const reply = await raw('GET', '/api/organization/api_key', org, undefined, key);
      expect(reply.status).toBe(401);
    }
    expect((await raw('GET', '/api/organization/api_key', org, undefined, member.key)).status).toBe(401);
    expect((await getOrganization({ client: service.client(), headers: { 'SVC-Organization': org }, path: { organization_id: org } })).response.status).toBe(
      404,
    );
    expect((await getFilesCursorHandler({ client: service.client(), headers: { 'SVC-Dataset': dataset.id } })).response.status).toBe(404);
    const me = await getMe({ client: service.client() });
    expect(me.data!.orgs.map((o) => o.id)).not.toContain(org);
    expect(me.data!.orgs.map((o) => o.id)).toContain(keeper);
    const again = await deleteOrganization({ client: service.client(), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(again.response.status).toBe(404);

    // Then the purge removes it and everything it owned.
    await waitFor(async () => !(await db()('organizations').where({ id: org }).first()));
    expect(await db()('datasets').where({ organization_id: org })).toEqual([]);
    expect(await db()('chunks').where({ dataset_id: dataset.id })).toEqual([]);
    expect(await db()('api_keys').where({ organization_id: org })).toEqual([]);
    expect(await db()('invitations').where({ organization_id: org })).toEqual([]);
    expect(await db()('user_organizations').where({ organization_id: org })).toEqual([]);
    expect(await db()('organizations').where({ id: keeper }).first()).toBeTruthy();
  });

  it('an organization marked deleted (its purge not yet run) is unusable, datasets included, even for the administrator', async () => {
    const org = await newOrg('Marked');
    const dataset = await seedDataset(db(), org, { tracking_id: 'marked-docs' });
    const owner = await newKey(org, 2);
    await db()('organizations').where({ id: org }).update({ deleted: 1 });
    expect((await raw('GET', '/api/organization/api_key', org, undefined, owner)).status).toBe(401);
    expect((await raw('GET', '/api/organization/api_key', org)).status).toBe(404);
    const byId = await getFilesCursorHandler({ client: service.client(), headers: { 'SVC-Dataset': dataset.id } });
    expect(byId.response.status).toBe(404);
    expect((await getFilesCursorHandler({ client: service.client(), headers: { 'SVC-Dataset': 'marked-docs' } })).response.status).toBe(404);
  });

  it('needs the admin role, the organization of SVC-Organization, and a live organization', async () => {
    const org = await newOrg('Kept');
    const other = await newOrg('Other');
    const reader = await newKey(org, 0);
    const low = await deleteOrganization({ client: service.client(reader), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(low.response.status).toBe(403);
    expect(low.error!.message).toMatch(/admin/);

    const owner = await newKey(org, 2);
    const foreign = await deleteOrganization({ client: service.client(owner), headers: { 'SVC-Organization': org }, path: { organization_id: other } });
    expect(foreign.response.status).toBe(404);
    const mismatch = await deleteOrganization({ client: service.client(), headers: { 'SVC-Organization': org }, path: { organization_id: other } });
    expect(mismatch.response.status).toBe(400);
    expect(mismatch.error!.message).toMatch(/SVC-Organization/);
    expect(
      (await deleteOrganization({ client: service.client(), headers: { 'SVC-Organization': UNKNOWN }, path: { organization_id: UNKNOWN } })).response.status,
    ).toBe(404);
    expect((await raw('DELETE', '/api/organization/not-a-uuid', org)).status).toBe(400);

    for (const id of [org, other]) expect((await db()('organizations').where({ id }).first()).deleted).toBe(0);
  });
});

describe('GET /api/organization/users/{organization_id}', () => {
  it("lists the members with this organization's membership only, not the administrator", async () => {
    const org = await newOrg('Team');
    const elsewhere = await newOrg('Elsewhere');
    const alice = await newMember(org, 2, 'alice-team@example.com');
    const bob = await newMember(org, 0, 'bob-team@example.com');
    await newMember(elsewhere, 1, 'carol-elsewhere@example.com');
    await postInvitation({
      client: service.client(),
      headers: { 'SVC-Organization': elsewhere },
      body: { email: 'alice-team@example.com', user_role: 0, app_url: 'https://app.example', redirect_uri: 'https://app.example' },
    });

    const admin = await newKey(org, 1);
    const { data, response } = await getOrganizationUsers({
      client: service.client(admin),
      headers: { 'SVC-Organization': org },
      path: { organization_id: org },
    });
    expect(response.status).toBe(200);
    expect(data!.map((u) => u.email)).toEqual(['alice-team@example.com', 'bob-team@example.com']);
    expect(data!.map((u) => u.id)).toEqual([alice.userId, bob.userId]);
    expect(data![0].user_orgs).toEqual([expect.objectContaining({ organization_id: org, user_id: alice.userId, role: 2 })]);
    expect(data![0].orgs.map((o) => o.id)).toEqual([org]);
    expect(data![1].user_orgs[0].role).toBe(0);
  });

  it('needs the admin role and the organization of SVC-Organization', async () => {
    const org = await newOrg('Private');
    const reader = await newKey(org, 0);
    expect(
      (await getOrganizationUsers({ client: service.client(reader), headers: { 'SVC-Organization': org }, path: { organization_id: org } })).response.status,
    ).toBe(403);
    const other = await newOrg('Other');
    const admin = await newKey(org, 1);
    expect(
      (await getOrganizationUsers({ client: service.client(admin), headers: { 'SVC-Organization': org }, path: { organization_id: other } })).response.status,
    ).toBe(404);
    expect(
      (await getOrganizationUsers({ client: service.client(admin), headers: { 'SVC-Organization': other }, path: { organization_id: other } })).response.status,
    ).toBe(404);
    expect(
      (await getOrganizationUsers({ client: service.client(), headers: { 'SVC-Organization': org }, path: { organization_id: other } })).response.status,
    ).toBe(400);
    expect((await raw('GET', '/api/organization/users/nope', org)).status).toBe(400);
  });
});

describe('POST /api/organization/usage/{organization_id}', () => {
  it('counts datasets, members, chunks, file bytes and messages live; unmetered counters are 0', async () => {
    const org = await newOrg('Busy');
    const a = await seedDataset(db(), org);
    const b = await seedDataset(db(), org);
    const gone = await seedDataset(db(), org);
    await db()('datasets').where({ id: gone.id }).update({ deleted: 1 });
    for (let i = 0; i < 3; i++) await seedChunk(db(), a.id);
    await seedChunk(db(), b.id);
    await seedChunk(db(), gone.id);
    await seedFile(db(), a.id);
    await seedFile(db(), b.id);
    await newMember(org, 0, 'usage-one@example.com');
    await newMember(org, 1, 'usage-two@example.com');

    const admin = await newKey(org, 1);
    const headers = { 'SVC-Organization': org };
    const { data, response } = await getOrganizationUsage({ client: service.client(admin), headers, path: { organization_id: org }, body: { v1_usage: true } });
    expect(response.status).toBe(200);
    expect(data).toEqual({
      dataset_count: 2,
      user_count: 2,
      chunk_count: 4,
      file_storage: 2468,
      message_count: 0,
      current_months_message_count: 0,
      search_count: 0,
      search_tokens: 0,
      message_tokens: 0,
      bytes_ingested: 0,
      tokens_ingested: 0,
      ocr_pages_ingested: 0,
      website_pages_scraped: 0,
      events_ingested: 0,
    });

    const withRange = await getOrganizationUsage({
      client: service.client(admin),
      headers,
      path: { organization_id: org },
      body: { date_range: { gte: '2026-01-01 00:00:00.000', lt: '2026-02-01' } },
    });
    expect(withRange.data!.dataset_count).toBe(2);
    const noBody = await service.request('POST', `/api/organization/usage/${org}`, { headers: { authorization: admin, 'SVC-Organization': org } });
    expect(noBody.status).toBe(200);
    expect(noBody.body.chunk_count).toBe(4);

    // The per-dataset counters follow deletes and multi-row inserts, whatever statement writes them.
    await db()('chunks')
      .whereIn('id', db()('chunks').select('id').where({ dataset_id: a.id }).limit(2))
      .delete();
    await db()('chunks').insert(['x', 'y', 'z'].map((chunk_html) => ({ dataset_id: b.id, chunk_html })));
    const after = await getOrganizationUsage({ client: service.client(admin), headers, path: { organization_id: org }, body: {} });
    expect(after.data!.chunk_count).toBe(5);

    // Each statement counts its change as a row; a chunk write's plan check folds many into one per dataset.
    for (let i = 0; i < 70; i++) await db()('chunks').insert({ dataset_id: b.id, chunk_html: `row ${i}` });
    const created = await createChunk({ client: service.client(admin), headers: { 'SVC-Dataset': b.id }, body: { chunk_html: 'through the API' } });
    expect(created.response.status).toBe(200);
    expect(await db()('dataset_chunk_counts').whereIn('dataset_id', [a.id, b.id, gone.id]).pluck('chunks')).toHaveLength(3);
    const folded = await getOrganizationUsage({ client: service.client(admin), headers, path: { organization_id: org }, body: {} });
    expect(folded.data!.chunk_count).toBe(5 + 70 + 1);
  });

  it('refuses bad bounds and types, the read role, and another organization', async () => {
    const org = await newOrg('Counted');
    const path = `/api/organization/usage/${org}`;
    const badBound = await raw('POST', path, org, { date_range: { gte: 'last tuesday' } });
    expect(badBound.status).toBe(400);
    expect(badBound.body.message).toMatch(/date_range\.gte/);
    expect((await raw('POST', path, org, { v1_usage: 'yes' })).status).toBe(400);
    expect((await raw('POST', path, org, { date_range: { gt: 5 } })).status).toBe(400);
    const reader = await newKey(org, 0);
    expect((await raw('POST', path, org, {}, reader)).status).toBe(403);
    const other = await newOrg('Other');
    expect((await raw('POST', `/api/organization/usage/${other}`, org, {}, await newKey(org, 2))).status).toBe(404);
  });
});

describe('DELETE /api/organization/api_key/{api_key_id}', () => {
  it('deletes a key of the organization, which stops working at once', async () => {
    const org = await newOrg('Keys');
    const reader = await newKey(org, 0);
    const victim = await newKey(org, 0);
    const list = await getOrganizationApiKeys({ client: service.client(), headers: { 'SVC-Organization': org } });
    const victimId = await keyIdOf(org, victim);
    expect(list.data!.map((k) => k.id)).toContain(victimId);

    const { response } = await deleteOrganizationApiKey({
      client: service.client(reader),
      headers: { 'SVC-Organization': org },
      path: { api_key_id: victimId },
    });
    expect(response.status).toBe(204);
    expect((await raw('GET', '/api/organization/api_key', org, undefined, victim)).status).toBe(401);
    const after = await getOrganizationApiKeys({ client: service.client(), headers: { 'SVC-Organization': org } });
    expect(after.data!.map((k) => k.id)).not.toContain(victimId);
  });

  it('refuses keys of a higher role, keys of other organizations and unknown ids', async () => {
    const org = await newOrg('Guarded keys');
    const other = await newOrg('Other keys');
    const reader = await newKey(org, 0);
    const owner = await newKey(org, 2);
    const ownerId = await keyIdOf(org, owner);
    const higher = await deleteOrganizationApiKey({ client: service.client(reader), headers: { 'SVC-Organization': org }, path: { api_key_id: ownerId } });
    expect(higher.response.status).toBe(403);
    expect(higher.error!.message).toMatch(/role owner/);

    const foreignKey = await newKey(other, 0);
    const foreignId = await keyIdOf(other, foreignKey);
    const foreign = await deleteOrganizationApiKey({ client: service.client(owner), headers: { 'SVC-Organization': org }, path: { api_key_id: foreignId } });
    expect(foreign.response.status).toBe(404);
    expect(
      (await deleteOrganizationApiKey({ client: service.client(owner), headers: { 'SVC-Organization': other }, path: { api_key_id: foreignId } })).response
        .status,
    ).toBe(404);
    expect(
      (await deleteOrganizationApiKey({ client: service.client(owner), headers: { 'SVC-Organization': org }, path: { api_key_id: UNKNOWN } })).response.status,
    ).toBe(404);
    expect((await raw('DELETE', '/api/organization/api_key/nope', org, undefined, owner)).status).toBe(400);
    for (const key of [owner, foreignKey]) expect((await db()('api_keys').where({ key_hash: hashOf(key) })).length).toBe(1);
  });
});

describe('organization keys: limits a key cannot pass on', () => {
  it('a key limited to datasets or routes cannot create a key without those limits', async () => {
    const org = await newOrg('Limits');
    const dataset = await seedDataset(db(), org);
    const limited = await newKey(org, 2, { dataset_ids: [dataset.id] });
    const call = (key: string, body: Record<string, unknown>) =>
      createOrganizationApiKey({ client: service.client(key), headers: { 'SVC-Organization': org }, body: { name: 'child', role: 0, ...body } });
    expect((await call(limited, {})).response.status).toBe(403);
    expect((await call(limited, { dataset_ids: [dataset.id] })).response.status).toBe(200);

    const scoped = await newKey(org, 2, { scopes: ['POST /api/organization/api_key', 'GET /api/organization/api_key'] });
    const wider = await call(scoped, {});
    expect(wider.response.status).toBe(403);
    expect(wider.error!.message).toMatch(/scopes/);
    expect((await call(scoped, { scopes: ['GET /api/dataset/scroll_files'] })).response.status).toBe(403);
    expect((await call(scoped, { scopes: ['GET /api/organization/api_key'] })).response.status).toBe(200);
  });
});

describe('POST /api/organization/update_dataset_configs', () => {
  it('writes the fields over every dataset whose configuration matches, and only those', async () => {
    const org = await newOrg('Configs');
    const other = await newOrg('Untouched');
    const hot = await seedDataset(db(), org);
    const cold = await seedDataset(db(), org);
    const foreign = await seedDataset(db(), other);
    await db()('datasets')
      .where({ id: hot.id })
      .update({ server_configuration: JSON.stringify({ TEMPERATURE: 1.5 }) });
    const owner = await newKey(org, 2);
    const headers = { 'SVC-Organization': org };

    const matched = await updateAllOrgDatasetConfigs({
      client: service.client(owner),
      headers,
      body: { match_configuration: { TEMPERATURE: 1.5 }, to_configuration: { LLM_DEFAULT_MODEL: 'gpt-4o', TEMPERATURE: 0.2 } },
    });
    expect(matched.response.status).toBe(204);
    expect(await configOf(hot.id)).toMatchObject({ LLM_DEFAULT_MODEL: 'gpt-4o', TEMPERATURE: 0.2, BM25_ENABLED: true });
    expect((await configOf(cold.id)).LLM_DEFAULT_MODEL ?? null).toBeNull();

    const all = await updateAllOrgDatasetConfigs({ client: service.client(owner), headers, body: { to_configuration: { MAX_TOKENS: 512 } } });
    expect(all.response.status).toBe(204);
    expect((await configOf(hot.id)).MAX_TOKENS).toBe(512);
    expect((await configOf(cold.id)).MAX_TOKENS).toBe(512);
    expect((await configOf(foreign.id)).MAX_TOKENS ?? null).toBeNull();

    const nested = await updateAllOrgDatasetConfigs({
      client: service.client(owner),
      headers,
      body: { match_configuration: { PUBLIC_DATASET: { enabled: false }, MAX_TOKENS: 512 }, to_configuration: { PAGEFIND_ENABLED: true } },
    });
    expect(nested.response.status).toBe(204);
    expect((await configOf(cold.id)).PAGEFIND_ENABLED).toBe(true);
    const none = await updateAllOrgDatasetConfigs({
      client: service.client(owner),
      headers,
      body: { match_configuration: { TEMPERATURE: 1.9 }, to_configuration: { MAX_TOKENS: 7 } },
    });
    expect(none.response.status).toBe(204);
    expect((await configOf(cold.id)).MAX_TOKENS).toBe(512);
  });

  it('refuses invalid fields, non-objects, vector shape changes of datasets with chunks, and roles below owner; nothing changes', async () => {
    const org = await newOrg('Strict');
    const a = await seedDataset(db(), org);
    const b = await seedDataset(db(), org);
    await seedChunk(db(), b.id);
    const path = '/api/organization/update_dataset_configs';
    const before = [await configOf(a.id), await configOf(b.id)];

    const wrong = await raw('POST', path, org, { to_configuration: { MAX_TOKENS: 5, TEMPERATURE: 7 } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/TEMPERATURE/);
    const unknown = await raw('POST', path, org, { to_configuration: { NO_SUCH_FIELD: 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/NO_SUCH_FIELD/);
    expect((await raw('POST', path, org, { to_configuration: 'fast' })).status).toBe(400);
    expect((await raw('POST', path, org, { to_configuration: [1] })).status).toBe(400);
    expect((await raw('POST', path, org, {})).status).toBe(400);
    expect((await raw('POST', path, org, { match_configuration: 3, to_configuration: {} })).status).toBe(400);
    const reshape = await raw('POST', path, org, { to_configuration: { MAX_TOKENS: 9, EMBEDDING_SIZE: 768 } });
    expect(reshape.status).toBe(400);
    expect(reshape.body.message).toMatch(/EMBEDDING_SIZE.*chunks|chunks.*EMBEDDING_SIZE/);
    const admin = await newKey(org, 1);
    expect((await raw('POST', path, org, { to_configuration: { MAX_TOKENS: 9 } }, admin)).status).toBe(403);

    expect([await configOf(a.id), await configOf(b.id)]).toEqual(before);
  });
});

async function configOf(datasetId: string): Promise<Record<string, unknown>> {
  return (await db()('datasets').where({ id: datasetId }).first()).server_configuration;
}

async function keyIdOf(organizationId: string, key: string): Promise<string> {
  return (
    await db()('api_keys')
      .where({ organization_id: organizationId, key_hash: hashOf(key) })
      .first()
  ).id;
}

function hashOf(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
