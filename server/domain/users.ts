// Users and their memberships (a role and route scopes per organization). The instance
// administrator is a user too (`is_instance_admin`), created at start, that owns every organization
// without being a member of any: it is not counted against plans nor listed among members.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { roleNames, type Caller, type Role } from '../auth/caller.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { timestamp } from '../format.js';
import { checkAllDatasets, checkRoleGrant, checkScopeGrant, insertApiKey, validateScopes } from './apiKeys.js';
import { insertOrganization, organizationRecord, type OrganizationRow } from './organizations.js';
import { reservePlanCapacity } from './quotas.js';

export const INSTANCE_ADMIN_EMAIL = 'admin@localhost';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  is_instance_admin: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface MembershipRow {
  id: string;
  user_id: string;
  organization_id: string;
  role: Role;
  scopes: string[] | null;
  created_at: Date;
  updated_at: Date;
}

interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  scopes: string[] | null;
  used: boolean;
  created_at: Date;
}

const adminIds = new WeakMap<Knex, string>();

/**
 * With an administrator key configured, makes sure the administrator's user row exists (once,
 * whatever the number of starts) and returns its id.
 */
export async function bootstrapInstanceAdmin(db: Knex, adminApiKey: string | null): Promise<string | null> {
  if (!adminApiKey) return null;
  let row = await db<UserRow>('users').where({ is_instance_admin: true }).first('id');
  if (!row) {
    // Two processes starting on one database: the partial unique index lets only one row in.
    await db.raw('insert into users (email, name, is_instance_admin) values (?, ?, true) on conflict do nothing', [
      INSTANCE_ADMIN_EMAIL,
      'Instance administrator',
    ]);
    row = await db<UserRow>('users').where({ is_instance_admin: true }).first('id');
    if (!row) throw new Error(`cannot create the instance administrator: a user with email ${INSTANCE_ADMIN_EMAIL} already exists`);
  }
  adminIds.set(db, row.id);
  return row.id;
}

/** The administrator's user id (created at start when ADMIN_API_KEY is set). */
export async function instanceAdminId(db: Knex): Promise<string> {
  const known = adminIds.get(db);
  if (known) return known;
  const row = await db<UserRow>('users').where({ is_instance_admin: true }).first('id');
  if (!row) throw new Error('the instance administrator has no user row; it is created at start when ADMIN_API_KEY is set');
  adminIds.set(db, row.id);
  return row.id;
}

/** The membership of a user in a live organization, if any. */
export async function membershipOf(db: Knex, userId: string, organizationId: string): Promise<MembershipRow | undefined> {
  return db<MembershipRow>('user_organizations')
    .join('organizations', 'organizations.id', 'user_organizations.organization_id')
    .where({ 'user_organizations.user_id': userId, 'user_organizations.organization_id': organizationId, 'organizations.deleted': 0 })
    .first('user_organizations.*');
}

/** The caller's user as a SlimUser; 400 for an organization key that belongs to no user. */
export async function getMe(db: Knex, caller: Caller): Promise<T.SlimUser> {
  if (!caller.userId) {
    throw badRequest('this API key is an organization key that belongs to no user; use a key made by or for a user');
  }
  const user = await db<UserRow>('users').where({ id: caller.userId }).first();
  if (!user) throw notFound(`user ${caller.userId} not found`);
  return slimUser(db, user);
}

/** A user with every live organization they belong to (the administrator: all of them, as owner). */
export async function slimUser(db: Knex, user: UserRow): Promise<T.SlimUser> {
  if (user.is_instance_admin) {
    const organizations = await db<OrganizationRow>('organizations').where({ deleted: 0 }).orderBy(['created_at', 'id']);
    return {
      ...userFields(user),
      user_orgs: organizations.map((org) => ownerMembership(user.id, org)),
      orgs: organizations.map(organizationRecord),
    };
  }
  const memberships = await db<MembershipRow>('user_organizations')
    .join('organizations', 'organizations.id', 'user_organizations.organization_id')
    .where({ 'user_organizations.user_id': user.id, 'organizations.deleted': 0 })
    .orderBy([{ column: 'user_organizations.created_at' }, { column: 'user_organizations.id' }])
    .select('user_organizations.*');
  const organizations = await db<OrganizationRow>('organizations').whereIn(
    'id',
    memberships.map((m) => m.organization_id),
  );
  const byId = new Map(organizations.map((org) => [org.id, org]));
  return {
    ...userFields(user),
    user_orgs: memberships.map(membershipRecord),
    orgs: memberships.map((m) => organizationRecord(byId.get(m.organization_id)!)),
  };
}

/** The members of an organization, each with this organization's membership only; oldest first. */
export async function listOrganizationUsers(db: Knex, organizationId: string): Promise<T.SlimUser[]> {
  const organization = await db<OrganizationRow>('organizations').where({ id: organizationId }).first();
  if (!organization) throw notFound(`organization ${organizationId} not found`);
  const rows = await db('user_organizations')
    .join('users', 'users.id', 'user_organizations.user_id')
    .where({ 'user_organizations.organization_id': organizationId })
    .orderBy([{ column: 'user_organizations.created_at' }, { column: 'user_organizations.id' }])
    .select('user_organizations.*', 'users.email', 'users.name', 'users.created_at as user_created_at');
  return rows.map((row: MembershipRow & { email: string; name: string | null; user_created_at: Date }) => ({
    id: row.user_id,
    email: row.email,
    name: row.name,
    created_at: timestamp(row.user_created_at),
    user_orgs: [membershipRecord(row)],
    orgs: [organizationRecord(organization)],
  }));
}

/**
 * Creates a user that works through API keys, and a key for them. The administrator may create any
 * user, who gets an organization of their own as owner; any other caller only a user whose email has
 * a pending invitation to the caller's organization, who joins it with the invitation's role and
 * scopes. Every other pending invitation of the email is accepted too, where the plan has room.
 */
export async function createApiOnlyUser(db: Knex, caller: Caller, request: T.CreateApiUserBody): Promise<T.CreateApiUserResponse> {
  const email = request.user_email.trim();
  const name = request.user_name.trim();
  if (!name) throw badRequest('user_name: must not be blank');
  try {
    return await db.transaction(async (trx) => {
      if (await userByEmail(trx, email)) throw badRequest(`user_email: a user with email ${email} already exists`);

      let organizationId: string;
      let role: Role;
      let scopes: string[] = [];
      if (caller.kind === 'admin') {
        organizationId = (await insertOrganization(trx, name)).id;
        role = 2;
      } else {
        const invitation = await trx<InvitationRow>('invitations')
          .where({ organization_id: caller.organizationId, used: false })
          .whereRaw('lower(email) = lower(?)', [email])
          .orderBy('created_at', 'desc')
          .first();
        if (!invitation) {
          throw forbidden(
            `user_email: ${email} has no pending invitation to organization ${caller.organizationId}; only the instance administrator may create users without one`,
          );
        }
        // The key handed back has the invitation's role, so the caller must hold that role itself.
        if (invitation.role > caller.role) {
          throw forbidden(
            `the invitation of ${email} is for role ${roleNames[invitation.role]}, above the caller's ${roleNames[caller.role]}; a caller with that role must create this user`,
          );
        }
        scopes = invitation.scopes ?? [];
        checkScopeGrant(caller, "the invitation's scopes", scopes);
        checkAllDatasets(caller, 'create a member');
        organizationId = caller.organizationId;
        role = invitation.role;
      }
      await reservePlanCapacity(trx, organizationId, { users: 1 });

      const [user] = await trx<UserRow>('users').insert({ email, name }).returning('*');
      await trx('user_organizations').insert({ user_id: user.id, organization_id: organizationId, role, scopes });
      await acceptPendingInvitations(trx, user.id, email, organizationId);

      // The key has no scopes of its own: the membership's scopes limit it, as its role does.
      const apiKey = await insertApiKey(trx, { organizationId, userId: user.id, name: `${name} (API-only user)`, role });
      return { user: await slimUser(trx, user), organization_id: organizationId, api_key: apiKey };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw badRequest(`user_email: a user with email ${email} already exists`);
    throw error;
  }
}

/**
 * Turns the pending invitations of an email into memberships of the user. `joined` is the
 * organization the user has just joined: its invitations are only marked used. An organization
 * whose plan has no room for another user keeps its invitation pending.
 */
async function acceptPendingInvitations(trx: Knex.Transaction, userId: string, email: string, joined: string): Promise<void> {
  const pending = await trx<InvitationRow>('invitations')
    .join('organizations', 'organizations.id', 'invitations.organization_id')
    .where({ 'invitations.used': false, 'organizations.deleted': 0 })
    .whereRaw('lower(invitations.email) = lower(?)', [email])
    .orderBy([
      { column: 'invitations.created_at', order: 'desc' },
      { column: 'invitations.id', order: 'desc' },
    ])
    .select('invitations.*');
  const handled = new Set<string>([joined]);
  const full = new Set<string>();
  for (const invitation of pending) {
    // The newest invitation of an organization decides the role there.
    if (handled.has(invitation.organization_id)) continue;
    handled.add(invitation.organization_id);
    try {
      await reservePlanCapacity(trx, invitation.organization_id, { users: 1 });
    } catch (error) {
      if ((error as { status?: number }).status !== 426) throw error;
      full.add(invitation.organization_id);
      continue;
    }
    await trx('user_organizations').insert({
      user_id: userId,
      organization_id: invitation.organization_id,
      role: invitation.role,
      scopes: invitation.scopes ?? [],
    });
  }
  const spent = pending.filter((i) => !full.has(i.organization_id)).map((i) => i.id);
  if (spent.length > 0) await trx('invitations').whereIn('id', spent).update({ used: true, updated_at: trx.fn.now() });
}

/**
 * Changes a member's role or scopes. The member is the caller's own user unless `user_id` names
 * another, which needs the admin role; nobody may grant a role above their own, nor change a member
 * whose role is above their own, nor hand out routes they may not call.
 */
export async function updateMembership(db: Knex, caller: Caller, organizationId: string, request: T.UpdateUserReqPayload): Promise<void> {
  const targetId = request.user_id ?? caller.userId;
  if (!targetId) throw badRequest('user_id: required, since this API key is an organization key that belongs to no user');
  if (request.role == null && request.scopes == null) throw badRequest('nothing to change: give role, scopes or both');
  if (targetId !== caller.userId && caller.role < 1) {
    throw forbidden(`changing another member needs role admin; the caller has role ${roleNames[caller.role]}`);
  }
  const scopes = request.scopes == null ? null : validateScopes('scopes', request.scopes);
  await db.transaction(async (trx) => {
    const membership = await trx<MembershipRow>('user_organizations').where({ user_id: targetId, organization_id: organizationId }).forUpdate().first();
    if (!membership) throw notFound(`user ${targetId} is not a member of organization ${organizationId}`);
    if (membership.role > caller.role) {
      throw forbidden(`user ${targetId} has role ${roleNames[membership.role]}, above the caller's ${roleNames[caller.role]}`);
    }
    if (request.role != null) checkRoleGrant(caller, 'role', request.role as Role);
    if (scopes) checkScopeGrant(caller, 'scopes', scopes);
    await trx('user_organizations')
      .where({ id: membership.id })
      .update({
        ...(request.role != null ? { role: request.role } : {}),
        ...(scopes ? { scopes } : {}),
        updated_at: trx.fn.now(),
      });
  });
}

export async function userByEmail(db: Knex, email: string): Promise<UserRow | undefined> {
  return db<UserRow>('users').whereRaw('lower(email) = lower(?)', [email.trim()]).first();
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === '23505';
}

function userFields(user: UserRow) {
  return { id: user.id, email: user.email, name: user.name, created_at: timestamp(user.created_at) };
}

export function membershipRecord(row: MembershipRow): T.UserOrganization {
  return {
    id: row.id,
    user_id: row.user_id,
    organization_id: row.organization_id,
    role: row.role,
    scopes: row.scopes ?? [],
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/**
 * The administrator's standing in an organization, shown as a membership: role owner, and an id
 * derived from the two ids so that it stays the same between calls.
 */
function ownerMembership(userId: string, org: OrganizationRow): T.UserOrganization {
  const hex = createHash('sha256').update(`${userId}:${org.id}`).digest('hex');
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  return {
    id,
    user_id: userId,
    organization_id: org.id,
    role: 2,
    scopes: [],
    created_at: timestamp(org.created_at),
    updated_at: timestamp(org.created_at),
  };
}
