// Handlers of the invitation operations.
import type { DeleteInvitationHandler, GetInvitationsHandler, PostInvitationHandler } from '../../generated/handlers.js';
import { checkPathOrganization } from '../auth/access.js';
import { deleteInvitation, inviteToOrganization, listInvitations } from '../domain/invitations.js';

export const post_invitation: PostInvitationHandler = async ({ body, caller, organizationId, services }) => {
  await inviteToOrganization(services.store.db, caller, organizationId, body);
  return { status: 204, body: undefined };
};

export const get_invitations: GetInvitationsHandler = async ({ path, caller, organizationId, services }) => {
  checkPathOrganization(caller, organizationId, path.organization_id);
  return { status: 200, body: await listInvitations(services.store.db, organizationId) };
};

export const delete_invitation: DeleteInvitationHandler = async ({ path, organizationId, services }) => {
  await deleteInvitation(services.store.db, organizationId, path.invitation_id);
  return { status: 204, body: undefined };
};
