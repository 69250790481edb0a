// Invitations of emails to organizations. No email is sent: an invitation turns into a membership
// when a user is created for the email, or at once when the email already belongs to a user.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { Caller, Role } from '../auth/caller.js';
import { badRequest, notFound } from '../errors.js';
import { timestamp } from '../format.js';
import { checkAllDatasets, checkRoleGrant, checkScopeGrant, validateScopes } from './apiKeys.js';
import { reservePlanCapacity } from './quotas.js';
import { isUniqueViolation, userByEmail } from './users.js';

interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  scopes: string[] | null;
  used: boolean;
  created_at: Date;
  updated_at: Date;
}

/**
 * Invites an email with a role (at most the caller's) and scopes (within the caller's). A pending
 * invitation of the same email to the organization is replaced. When the email belongs to a user,
 * the user becomes a member at once (within the plan's user count) and the invitation is stored used.
 */
export async function inviteToOrganization(db: Knex, caller: Caller, organizationId: string, request: T.InvitationData): Promise<void> {
  const email = request.email.trim();
  const role = request.user_role as Role;
  checkRoleGrant(caller, 'user_role', role);
  const scopes = validateScopes('scopes', request.scopes);
  checkScopeGrant(caller, 'scopes', scopes);
  checkAllDatasets(caller, 'invite members');
  try {
    await db.transaction(async (trx) => {
      const user = await userByEmail(trx, email);
      if (user?.is_instance_admin) throw badRequest(`email: ${email} is the instance administrator, who owns every organization already`);
      if (user) {
        const member = await trx('user_organizations').where({ user_id: user.id, organization_id: organizationId }).first('id');
        if (member) throw badRequest(`email: ${email} is already a member of organization ${organizationId}; change their role with PUT /api/user`);
        await reservePlanCapacity(trx, organizationId, { users: 1 });
        await trx('user_organizations').insert({ user_id: user.id, organization_id: organizationId, role, scopes });
      }
      await trx('invitations').where({ organization_id: organizationId, used: false }).whereRaw('lower(email) = lower(?)', [email]).del();
      await trx('invitations').insert({ organization_id: organizationId, email, role, scopes, used: Boolean(user) });
    });
  } catch (error) {
    // A user created for the email at the same moment already holds the membership.
    if (isUniqueViolation(error)) throw badRequest(`email: ${email} is already a member of organization ${organizationId}`);
    throw error;
  }
}

export async function listInvitations(db: Knex, organizationId: string): Promise<T.Invitation[]> {
  const rows = await db<InvitationRow>('invitations').where({ organization_id: organizationId }).orderBy(['created_at', 'id']);
  return rows.map(invitationRecord);
}

/** Deletes an invitation of the organization; 404 for any other id. */
export async function deleteInvitation(db: Knex, organizationId: string, invitationId: string): Promise<void> {
  const deleted = await db('invitations').where({ id: invitationId, organization_id: organizationId }).del();
  if (deleted === 0) throw notFound(`invitation ${invitationId} not found in organization ${organizationId}`);
}

function invitationRecord(row: InvitationRow): T.Invitation {
  return {
    id: row.id,
    email: row.email,
    organization_id: row.organization_id,
    role: row.role,
    scopes: row.scopes ?? [],
    used: row.used,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}
