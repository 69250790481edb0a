// Users, memberships and invitations: the administrator's identity, API-only users, member roles
// and scopes (which bind the member's keys), user keys, invitations and the plan's user count.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiOnlyUser,
  createOrganization,
  createOrganizationApiKey,
  deleteInvitation,
  deleteUserApiKey,
  getInvitations,
  getMe,
  getOrganization,
  getOrganizationApiKeys,
  getUserApiKeys,
  postInvitation,
  updateUser,
} from '../../sdk/src/generated/sdk.gen.js';
import { bootstrapInstanceAdmin } from '../../server/domain/users.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
const db = () => service.services.store.db;
const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';
let emailCounter = 0;
const email = (stem: string) => `${stem}-${++emailCounter}@example.com`;

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

async function invite(organizationId: string, address: string, role: 0 | 1 | 2, extra: Record<string, unknown> = {}, key = ADMIN_KEY) {
  return postInvitation({
    client: service.client(key),
    headers: { 'SVC-Organization': organizationId },
    body: { email: address, user_role: role, app_url: 'https://app.example', redirect_uri: 'https://app.example/welcome', ...extra },
  });
}

/** A user who joined `organizationId` with `role` through an invitation, and their key for it. */
async function newMember(organizationId: string, role: 0 | 1 | 2, extra: Record<string, unknown> = {}) {
  const address = email('member');
  expect((await invite(organizationId, address, role, extra)).response.status).toBe(204);
  const { data, response } = await createApiOnlyUser({
    client: service.client(await newKey(organizationId, 2)),
    body: { user_email: address, user_name: 'Member' },
  });
  expect(response.status).toBe(200);
  return { userId: data!.user.id, key: data!.api_key, email: address };
}

/** Puts the organization on a plan that allows `users` members. */
async function limitUsers(organizationId: string, users: number): Promise<void> {
  const [plan] = await db()('plans')
    .insert({ name: `Tiny ${organizationId}`, chunk_count: 1000, dataset_count: 10, file_storage: 1_000_000, message_count: 1000, user_count: users })
    .returning('id');
  await db()('subscriptions').where({ organization_id: organizationId }).update({ plan_id: plan.id });
}

async function memberRole(userId: string, organizationId: string): Promise<number | undefined> {
  return (await db()('user_organizations').where({ user_id: userId, organization_id: organizationId }).first())?.role;
}

function raw(method: string, path: string, key: string, body?: unknown, organizationId?: string) {
  const headers: Record<string, string> = { authorization: key };
  if (organizationId) headers['SVC-Organization'] = organizationId;
  return service.request(method, path, { headers, body });
}

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

describe('the instance administrator', () => {
  it('is one user row, created at start and not again', async () => {
    const rows = await db()('users').where({ is_instance_admin: true });
    expect(rows).toHaveLength(1);
    expect(rows[0].email).toBe('admin@localhost');
    expect(await bootstrapInstanceAdmin(db(), ADMIN_KEY)).toBe(rows[0].id);
    expect(await db()('users').where({ is_instance_admin: true })).toHaveLength(1);
  });

  it('GET /api/auth/me: owns every live organization', async () => {
    const a = await newOrg('A');
    const b = await newOrg('B');
    const { data, response } = await getMe({ client: service.client() });
    expect(response.status).toBe(200);
    expect(data!.email).toBe('admin@localhost');
    const orgIds = data!.orgs.map((o) => o.id);
    expect(orgIds).toEqual(expect.arrayContaining([a, b]));
    expect(data!.user_orgs).toHaveLength(data!.orgs.length);
    for (const membership of data!.user_orgs) expect(membership).toMatchObject({ user_id: data!.id, role: 2 });
    expect(data!.user_orgs.map((m) => m.organization_id)).toEqual(orgIds);
    const again = await getMe({ client: service.client() });
    expect(again.data!.user_orgs.map((m) => m.id)).toEqual(data!.user_orgs.map((m) => m.id));
    // Not a member anywhere, so not counted against plans.
    expect(await db()('user_organizations').where({ user_id: data!.id })).toEqual([]);
  });
});

describe('GET /api/auth/me', () => {
  it("gives the key's user with their organizations; an organization key has no user (400)", async () => {
    const org = await newOrg('Mine');
    const member = await newMember(org, 1);
    const { data, response } = await getMe({ client: service.client(member.key) });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: member.userId, email: member.email, name: 'Member' });
    expect(data!.user_orgs).toEqual([expect.objectContaining({ organization_id: org, role: 1 })]);

    const orgKey = await newKey(org, 2);
    const anonymous = await getMe({ client: service.client(orgKey) });
    expect(anonymous.response.status).toBe(400);
    expect(anonymous.error!.message).toMatch(/belongs to no user/);
    expect((await raw('GET', '/api/auth/me', 'svc_not-a-key')).status).toBe(401);
    expect((await service.request('GET', '/api/auth/me')).status).toBe(401);
  });
});

describe('POST /api/auth/create_api_only_user', () => {
  it('the administrator creates a user with an organization of their own and an owner key', async () => {
    const address = email('founder');
    const { data, response } = await createApiOnlyUser({ client: service.client(), body: { user_email: address, user_name: 'Founder' } });
    expect(response.status).toBe(200);
    expect(data!.api_key).toMatch(/^svc_[A-Za-z0-9_-]{40,}$/);
    expect(data!.user).toMatchObject({ email: address, name: 'Founder' });
    expect(data!.user.user_orgs).toEqual([expect.objectContaining({ organization_id: data!.organization_id, role: 2 })]);
    expect(data!.user.orgs).toEqual([expect.objectContaining({ id: data!.organization_id, name: 'Founder' })]);

    const org = await getOrganization({
      client: service.client(data!.api_key),
      headers: { 'SVC-Organization': data!.organization_id },
      path: { organization_id: data!.organization_id },
    });
    expect(org.response.status).toBe(200);
    expect(org.data!.plan).toMatchObject({ name: 'Self-hosted' });
    const me = await getMe({ client: service.client(data!.api_key) });
    expect(me.data!.id).toBe(data!.user.id);
    const stored = await db()('api_keys').where({ user_id: data!.user.id });
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ role: 2, organization_id: data!.organization_id, key_hash: hashOf(data!.api_key) });
  });

  it('refuses an email that is taken (whatever its case), malformed emails and wrong types', async () => {
    const address = email('taken');
    expect((await createApiOnlyUser({ client: service.client(), body: { user_email: address, user_name: 'One' } })).response.status).toBe(200);
    const users = await db()('users').count<{ count: string }[]>('* as count');
    const taken = await createApiOnlyUser({ client: service.client(), body: { user_email: address.toUpperCase(), user_name: 'Two' } });
    expect(taken.response.status).toBe(400);
    expect(taken.error!.message).toMatch(/already exists/);
    const call = (body: unknown) => raw('POST', '/api/auth/create_api_only_user', ADMIN_KEY, body);
    expect((await call({ user_email: 'not an email', user_name: 'x' })).status).toBe(400);
    expect((await call({ user_email: email('x'), user_name: 7 })).status).toBe(400);
    expect((await call({ user_email: email('x') })).status).toBe(400);
    expect((await call({ user_email: email('x'), user_name: '  ' })).status).toBe(400);
    expect((await call({ user_email: 'admin@localhost', user_name: 'impostor' })).status).toBe(400);
    expect(await db()('users').count<{ count: string }[]>('* as count')).toEqual(users);
  });

  it("a key creates only invited users, who join the key's organization with the invitation's role and scopes", async () => {
    const org = await newOrg('Inviting');
    const elsewhere = await newOrg('Also inviting');
    const owner = await newKey(org, 2);
    const stranger = email('stranger');
    const refused = await createApiOnlyUser({ client: service.client(owner), body: { user_email: stranger, user_name: 'Stranger' } });
    expect(refused.response.status).toBe(403);
    expect(refused.error!.message).toMatch(/no pending invitation/);

    const address = email('invitee');
    const scopes = ['GET /api/organization/api_key', 'GET /api/auth/me'];
    expect((await invite(org, address, 1, { scopes })).response.status).toBe(204);
    expect((await invite(elsewhere, address, 0)).response.status).toBe(204);
    // An invitation elsewhere does not let this organization's key create the user.
    const otherOwner = await newKey(await newOrg('Uninvolved'), 2);
    expect((await createApiOnlyUser({ client: service.client(otherOwner), body: { user_email: address, user_name: 'Invitee' } })).response.status).toBe(403);

    const { data, response } = await createApiOnlyUser({ client: service.client(owner), body: { user_email: address, user_name: 'Invitee' } });
    expect(response.status).toBe(200);
    expect(data!.organization_id).toBe(org);
    const memberships = Object.fromEntries(data!.user.user_orgs.map((m) => [m.organization_id, m]));
    expect(memberships[org]).toMatchObject({ role: 1, scopes });
    expect(memberships[elsewhere]).toMatchObject({ role: 0 });
    expect(await db()('invitations').whereRaw('lower(email) = ?', [address]).pluck('used')).toEqual([true, true]);
    expect(
      (
        await db()('api_keys')
          .where({ key_hash: hashOf(data!.api_key) })
          .first()
      ).role,
    ).toBe(1);

    // The member's scopes bind the key.
    expect((await getOrganizationApiKeys({ client: service.client(data!.api_key), headers: { 'SVC-Organization': org } })).response.status).toBe(200);
    const outside = await getOrganization({ client: service.client(data!.api_key), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(outside.response.status).toBe(403);
    expect(outside.error!.message).toMatch(/scopes/);
  });

  it('a key may not hand out a role above its own through an invitation', async () => {
    const org = await newOrg('Escalation');
    const address = email('owner-to-be');
    expect((await invite(org, address, 2)).response.status).toBe(204);
    const reader = await newKey(org, 0);
    const refused = await createApiOnlyUser({ client: service.client(reader), body: { user_email: address, user_name: 'Owner' } });
    expect(refused.response.status).toBe(403);
    expect(refused.error!.message).toMatch(/role owner/);
    expect(await db()('users').whereRaw('lower(email) = ?', [address])).toEqual([]);
  });

  it('a key limited to datasets or routes cannot turn an invitation into an unlimited member', async () => {
    const org = await newOrg('Limited');
    const dataset = (await db()('datasets').insert({ organization_id: org, name: 'docs' }).returning('id'))[0].id;
    const address = email('limited');
    expect((await invite(org, address, 0)).response.status).toBe(204);
    const byDataset = await newKey(org, 2, { dataset_ids: [dataset] });
    const refused = await createApiOnlyUser({ client: service.client(byDataset), body: { user_email: address, user_name: 'Limited' } });
    expect(refused.response.status).toBe(403);
    expect(refused.error!.message).toMatch(/datasets/);
    const byRoute = await newKey(org, 2, { scopes: ['POST /api/auth/create_api_only_user'] });
    const scoped = await createApiOnlyUser({ client: service.client(byRoute), body: { user_email: address, user_name: 'Limited' } });
    expect(scoped.response.status).toBe(403);
    expect(scoped.error!.message).toMatch(/scopes/);
    expect(await db()('users').whereRaw('lower(email) = ?', [address])).toEqual([]);
  });

  it("426 when the organization's plan has no room for another user, and nothing is written", async () => {
    const org = await newOrg('Small');
    await newMember(org, 0);
    await limitUsers(org, 1);
    const address = email('one-too-many');
    expect((await invite(org, address, 0)).response.status).toBe(204);
    const users = await db()('users').count<{ count: string }[]>('* as count');
    const keys = await db()('api_keys').count<{ count: string }[]>('* as count');

    const { response, error } = await createApiOnlyUser({ client: service.client(await newKey(org, 2)), body: { user_email: address, user_name: 'Late' } });
    expect(response.status).toBe(426);
    expect(error!.message).toMatch(/allows 1 users/);
    expect(await db()('users').count<{ count: string }[]>('* as count')).toEqual(users);
    expect(await db()('api_keys').count<{ count: string }[]>('* as count')).toEqual([{ count: String(Number(keys[0].count) + 1) }]);
    expect(await db()('invitations').where({ organization_id: org, email: address }).pluck('used')).toEqual([false]);
    expect(await db()('user_organizations').where({ organization_id: org })).toHaveLength(1);
  });

  it('an invitation to an organization that is full stays pending when the user is created elsewhere', async () => {
    const full = await newOrg('Full');
    await newMember(full, 0);
    await limitUsers(full, 1);
    const address = email('elsewhere');
    expect((await invite(full, address, 0)).response.status).toBe(204);
    const { data, response } = await createApiOnlyUser({ client: service.client(), body: { user_email: address, user_name: 'Elsewhere' } });
    expect(response.status).toBe(200);
    expect(data!.user.user_orgs.map((m) => m.organization_id)).toEqual([data!.organization_id]);
    expect(await db()('invitations').where({ organization_id: full, email: address }).pluck('used')).toEqual([false]);
  });
});

describe('PUT /api/user', () => {
  it("an admin member changes another member's role, and that member's keys follow at once", async () => {
    const org = await newOrg('Roles');
    const boss = await newMember(org, 1);
    const worker = await newMember(org, 1);
    const headers = { 'SVC-Organization': org };
    const getOrg = (key: string) => getOrganization({ client: service.client(key), headers, path: { organization_id: org } });
    expect((await getOrg(worker.key)).response.status).toBe(200);

    const demoted = await updateUser({ client: service.client(boss.key), headers, body: { user_id: worker.userId, role: 0 } });
    expect(demoted.response.status).toBe(204);
    expect(await memberRole(worker.userId, org)).toBe(0);
    const refused = await getOrg(worker.key);
    expect(refused.response.status).toBe(403);
    expect(refused.error!.message).toMatch(/role read/);

    expect((await updateUser({ client: service.client(boss.key), headers, body: { user_id: worker.userId, role: 1 } })).response.status).toBe(204);
    expect((await getOrg(worker.key)).response.status).toBe(200);
  });

  it('a member changes their own membership: lowering the role, not raising it', async () => {
    const org = await newOrg('Self');
    const me = await newMember(org, 1);
    const headers = { 'SVC-Organization': org };
    const raise = await updateUser({ client: service.client(me.key), headers, body: { role: 2 } });
    expect(raise.response.status).toBe(403);
    expect(raise.error!.message).toMatch(/cannot grant role owner/);
    expect((await updateUser({ client: service.client(me.key), headers, body: { role: 0 } })).response.status).toBe(204);
    expect(await memberRole(me.userId, org)).toBe(0);
  });

  it('refuses role escalation, changing a higher member, a read caller changing others, and non-members', async () => {
    const org = await newOrg('Guarded roles');
    const owner = await newMember(org, 2);
    const admin = await newMember(org, 1);
    const reader = await newMember(org, 0);
    const outsider = await newMember(await newOrg('Outside'), 1);
    const headers = { 'SVC-Organization': org };
    const call = (key: string, body: Record<string, unknown>) => updateUser({ client: service.client(key), headers, body });

    const grant = await call(admin.key, { user_id: reader.userId, role: 2 });
    expect(grant.response.status).toBe(403);
    expect(grant.error!.message).toMatch(/role owner/);
    const higher = await call(admin.key, { user_id: owner.userId, role: 0 });
    expect(higher.response.status).toBe(403);
    expect(higher.error!.message).toMatch(/above/);
    const readOther = await call(reader.key, { user_id: admin.userId, role: 0 });
    expect(readOther.response.status).toBe(403);
    expect(readOther.error!.message).toMatch(/needs role admin/);
    const stranger = await call(owner.key, { user_id: outsider.userId, role: 0 });
    expect(stranger.response.status).toBe(404);
    expect(stranger.error!.message).toMatch(/not a member/);
    expect((await call(owner.key, { user_id: UNKNOWN, role: 0 })).response.status).toBe(404);
    // A key of another organization cannot act here at all: to it, the organization is unknown.
    expect((await call(outsider.key, { user_id: reader.userId, role: 1 })).response.status).toBe(404);

    expect([await memberRole(owner.userId, org), await memberRole(admin.userId, org), await memberRole(reader.userId, org)]).toEqual([2, 1, 0]);
  });

  it('refuses bad input: wrong types, unknown roles and scopes, nothing to change, no user to default to', async () => {
    const org = await newOrg('Bad input');
    const member = await newMember(org, 0);
    const call = (body: unknown, key = ADMIN_KEY) => raw('PUT', '/api/user', key, body, org);
    expect((await call({ user_id: member.userId, role: 5 })).status).toBe(400);
    expect((await call({ user_id: member.userId, role: 'owner' })).status).toBe(400);
    expect((await call({ user_id: 'someone', role: 0 })).status).toBe(400);
    const scope = await call({ user_id: member.userId, scopes: ['GET /api/nowhere'] });
    expect(scope.status).toBe(400);
    expect(scope.body.message).toMatch(/GET \/api\/nowhere/);
    const nothing = await call({ user_id: member.userId });
    expect(nothing.status).toBe(400);
    expect(nothing.body.message).toMatch(/nothing to change/);
    const orgKey = await newKey(org, 2);
    const noUser = await call({ role: 0 }, orgKey);
    expect(noUser.status).toBe(400);
    expect(noUser.body.message).toMatch(/user_id/);
    expect((await service.request('PUT', '/api/user', { headers: { authorization: ADMIN_KEY }, body: { role: 0 } })).status).toBe(400);
  });

  it("scopes set on a member bind the member's keys; a scoped member cannot widen their own scopes", async () => {
    const org = await newOrg('Scopes');
    const member = await newMember(org, 1);
    const headers = { 'SVC-Organization': org };
    const scopes = ['PUT /api/user', 'GET /api/auth/me'];
    expect((await updateUser({ client: service.client(), headers, body: { user_id: member.userId, scopes } })).response.status).toBe(204);
    expect((await getMe({ client: service.client(member.key) })).response.status).toBe(200);
    const listing = await getOrganizationApiKeys({ client: service.client(member.key), headers });
    expect(listing.response.status).toBe(403);
    expect(listing.error!.message).toMatch(/scopes/);

    const widen = await updateUser({ client: service.client(member.key), headers, body: { scopes: [] } });
    expect(widen.response.status).toBe(403);
    const other = await updateUser({ client: service.client(member.key), headers, body: { scopes: ['GET /api/organization/api_key'] } });
    expect(other.response.status).toBe(403);
    expect((await updateUser({ client: service.client(member.key), headers, body: { scopes: ['PUT /api/user'] } })).response.status).toBe(204);
    expect((await db()('user_organizations').where({ user_id: member.userId, organization_id: org }).first()).scopes).toEqual(['PUT /api/user']);
  });

  it('a key stops working when its user leaves the organization', async () => {
    const org = await newOrg('Leaving');
    const member = await newMember(org, 1);
    await db()('user_organizations').where({ user_id: member.userId, organization_id: org }).del();
    const reply = await raw('GET', '/api/auth/me', member.key);
    expect(reply.status).toBe(403);
    expect(reply.body.message).toMatch(/no longer a member/);
  });
});

describe('user API keys', () => {
  it("GET /api/user/api_key lists the user's keys, including those the user's key made, without values", async () => {
    const org = await newOrg('User keys');
    const member = await newMember(org, 1);
    const made = await newKey(org, 0, {}, member.key);
    const orgKey = await newKey(org, 1);
    const { data, response } = await getUserApiKeys({ client: service.client(member.key) });
    expect(response.status).toBe(200);
    const ids = data!.map((k) => k.id);
    expect(ids).toHaveLength(2);
    expect(ids).toEqual(expect.arrayContaining([await keyIdOf(member.key), await keyIdOf(made)]));
    expect(ids).not.toContain(await keyIdOf(orgKey));
    expect(JSON.stringify(data)).not.toContain(member.key.slice(4));
    expect(data!.every((k) => k.organization_id === org)).toBe(true);

    const noUser = await getUserApiKeys({ client: service.client(orgKey) });
    expect(noUser.response.status).toBe(400);
    expect(noUser.error!.message).toMatch(/belongs to no user/);
    expect((await getUserApiKeys({ client: service.client() })).data).toEqual([]);
  });

  it('a key made by a user key cannot outrank the user, even if it was made before a demotion', async () => {
    const org = await newOrg('Outrank');
    const member = await newMember(org, 2);
    const made = await newKey(org, 2, {}, member.key);
    await updateUser({ client: service.client(), headers: { 'SVC-Organization': org }, body: { user_id: member.userId, role: 0 } });
    const refused = await getOrganization({ client: service.client(made), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(refused.response.status).toBe(403);
    const escalate = await createOrganizationApiKey({ client: service.client(made), headers: { 'SVC-Organization': org }, body: { name: 'x', role: 1 } });
    expect(escalate.response.status).toBe(403);
  });

  it('DELETE /api/user/api_key/{api_key_id} deletes only own keys', async () => {
    const org = await newOrg('Delete user keys');
    const member = await newMember(org, 1);
    const other = await newMember(org, 1);
    const spare = await newKey(org, 0, {}, member.key);
    const spareId = await keyIdOf(spare);

    const foreign = await deleteUserApiKey({ client: service.client(other.key), path: { api_key_id: spareId } });
    expect(foreign.response.status).toBe(404);
    const orgKey = await newKey(org, 2);
    expect((await deleteUserApiKey({ client: service.client(orgKey), path: { api_key_id: spareId } })).response.status).toBe(404);
    expect((await deleteUserApiKey({ client: service.client(member.key), path: { api_key_id: UNKNOWN } })).response.status).toBe(404);
    expect((await raw('DELETE', '/api/user/api_key/nope', member.key)).status).toBe(400);
    expect((await raw('GET', '/api/auth/me', spare)).status).toBe(200);

    expect((await deleteUserApiKey({ client: service.client(member.key), path: { api_key_id: spareId } })).response.status).toBe(204);
    expect((await raw('GET', '/api/auth/me', spare)).status).toBe(401);
    expect((await raw('GET', '/api/auth/me', member.key)).status).toBe(200);
  });

  it('an expired user key is refused with 401', async () => {
    const org = await newOrg('Expiry');
    const member = await newMember(org, 1);
    const short = await newKey(org, 0, { expires_at: new Date(Date.now() + 1200).toISOString() }, member.key);
    expect((await raw('GET', '/api/user/api_key', short)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1300));
    const reply = await raw('GET', '/api/user/api_key', short);
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/expired/);
  });
});

describe('invitations', () => {
  it('POST /api/invitation records a pending invitation, replacing an earlier one; GET lists them', async () => {
    const org = await newOrg('Invites');
    const admin = await newKey(org, 1);
    const address = email('pending');
    expect((await invite(org, address, 0, {}, admin)).response.status).toBe(204);
    expect((await invite(org, address.toUpperCase(), 1, { scopes: ['GET /api/auth/me'] }, admin)).response.status).toBe(204);
    const reader = await newKey(org, 0);
    const { data, response } = await getInvitations({ client: service.client(reader), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(response.status).toBe(200);
    expect(data).toEqual([expect.objectContaining({ email: address.toUpperCase(), organization_id: org, role: 1, used: false, scopes: ['GET /api/auth/me'] })]);
  });

  it('an email of an existing user makes them a member at once; a member cannot be invited again', async () => {
    const org = await newOrg('Direct');
    const existing = await newMember(await newOrg('Home'), 1);
    expect((await invite(org, existing.email, 0)).response.status).toBe(204);
    expect(await memberRole(existing.userId, org)).toBe(0);
    const listed = await getInvitations({ client: service.client(), headers: { 'SVC-Organization': org }, path: { organization_id: org } });
    expect(listed.data).toEqual([expect.objectContaining({ email: existing.email, used: true, role: 0 })]);
    const me = await getMe({ client: service.client(existing.key) });
    expect(me.data!.orgs.map((o) => o.id)).toContain(org);

    const again = await invite(org, existing.email, 1);
    expect(again.response.status).toBe(400);
    expect(again.error!.message).toMatch(/already a member/);
    expect((await invite(org, 'admin@localhost', 1)).response.status).toBe(400);
  });

  it('426 when inviting an existing user into a full organization, and nothing is written', async () => {
    const org = await newOrg('Crowded');
    await newMember(org, 0);
    await limitUsers(org, 1);
    const existing = await newMember(await newOrg('Roomy'), 1);
    const invitations = await db()('invitations').where({ organization_id: org });
    const { response, error } = await invite(org, existing.email, 0);
    expect(response.status).toBe(426);
    expect(error!.message).toMatch(/plan allows 1 users/);
    expect(await memberRole(existing.userId, org)).toBeUndefined();
    expect(await db()('invitations').where({ organization_id: org })).toEqual(invitations);
  });

  it('POST /api/invitation refuses the read role, a role above the caller, scopes beyond it and bad input', async () => {
    const org = await newOrg('Strict invites');
    const reader = await newKey(org, 0);
    const admin = await newKey(org, 1);
    const low = await invite(org, email('x'), 0, {}, reader);
    expect(low.response.status).toBe(403);
    expect(low.error!.message).toMatch(/needs role admin/);
    const above = await invite(org, email('x'), 2, {}, admin);
    expect(above.response.status).toBe(403);
    expect(above.error!.message).toMatch(/role owner/);
    const dataset = (await db()('datasets').insert({ organization_id: org, name: 'docs' }).returning('id'))[0].id;
    const limited = await invite(org, email('x'), 0, {}, await newKey(org, 1, { dataset_ids: [dataset] }));
    expect(limited.response.status).toBe(403);
    expect(limited.error!.message).toMatch(/datasets/);
    const scoped = await newKey(org, 1, { scopes: ['POST /api/invitation'] });
    expect((await invite(org, email('x'), 0, {}, scoped)).response.status).toBe(403);
    expect((await invite(org, email('x'), 0, { scopes: ['POST /api/invitation'] }, scoped)).response.status).toBe(204);

    const call = (body: Record<string, unknown>) => raw('POST', '/api/invitation', ADMIN_KEY, { app_url: 'a', redirect_uri: 'b', ...body }, org);
    expect((await call({ email: 'nobody', user_role: 0 })).status).toBe(400);
    expect((await call({ email: email('x'), user_role: 3 })).status).toBe(400);
    expect((await call({ email: email('x'), user_role: '1' })).status).toBe(400);
    expect((await call({ email: email('x'), user_role: 0, scopes: ['GET /api/nowhere'] })).status).toBe(400);
    expect((await raw('POST', '/api/invitation', ADMIN_KEY, { email: email('x'), user_role: 0 }, org)).status).toBe(400);
    expect((await raw('POST', '/api/invitation', ADMIN_KEY, { email: email('x'), user_role: 0, app_url: 'a', redirect_uri: 'b' }, UNKNOWN)).status).toBe(404);
    expect(await db()('invitations').where({ organization_id: org })).toHaveLength(1);
  });

  it('GET /api/invitations/{organization_id} must name the organization of SVC-Organization', async () => {
    const org = await newOrg('Listing');
    const other = await newOrg('Not mine');
    const reader = await newKey(org, 0);
    expect(
      (await getInvitations({ client: service.client(reader), headers: { 'SVC-Organization': org }, path: { organization_id: other } })).response.status,
    ).toBe(404);
    expect(
      (await getInvitations({ client: service.client(reader), headers: { 'SVC-Organization': other }, path: { organization_id: other } })).response.status,
    ).toBe(404);
    expect((await getInvitations({ client: service.client(), headers: { 'SVC-Organization': org }, path: { organization_id: other } })).response.status).toBe(
      400,
    );
    expect((await raw('GET', '/api/invitations/nope', reader, undefined, org)).status).toBe(400);
  });

  it('DELETE /api/invitation/{invitation_id} deletes invitations of its organization only', async () => {
    const org = await newOrg('Withdraw');
    const other = await newOrg('Other withdraw');
    await invite(org, email('withdrawn'), 0);
    await invite(other, email('kept'), 0);
    const [mine] = await db()('invitations').where({ organization_id: org }).pluck('id');
    const [theirs] = await db()('invitations').where({ organization_id: other }).pluck('id');
    const admin = await newKey(org, 1);
    const headers = { 'SVC-Organization': org };

    expect((await deleteInvitation({ client: service.client(await newKey(org, 0)), headers, path: { invitation_id: mine } })).response.status).toBe(403);
    expect((await deleteInvitation({ client: service.client(admin), headers, path: { invitation_id: theirs } })).response.status).toBe(404);
    expect((await deleteInvitation({ client: service.client(), headers, path: { invitation_id: theirs } })).response.status).toBe(404);
    expect((await raw('DELETE', '/api/invitation/nope', admin, undefined, org)).status).toBe(400);
    const { response } = await deleteInvitation({ client: service.client(admin), headers, path: { invitation_id: mine } });
    expect(response.status).toBe(204);
    expect((await deleteInvitation({ client: service.client(admin), headers, path: { invitation_id: mine } })).response.status).toBe(404);
    expect(await db()('invitations').where({ id: theirs })).toHaveLength(1);
  });
});

async function keyIdOf(key: string): Promise<string> {
  return (
    await db()('api_keys')
      .where({ key_hash: hashOf(key) })
      .first()
  ).id;
}

function hashOf(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
