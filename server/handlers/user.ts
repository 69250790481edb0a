// Handlers of the user operations.
import type { DeleteUserApiKeyHandler, GetUserApiKeysHandler, UpdateUserHandler } from '../../generated/handlers.js';
import { deleteUserApiKey, listUserApiKeys } from '../domain/apiKeys.js';
import { updateMembership } from '../domain/users.js';

export const update_user: UpdateUserHandler = async ({ body, caller, organizationId, services }) => {
  await updateMembership(services.store.db, caller, organizationId, body);
  return { status: 204, body: undefined };
};

export const get_user_api_keys: GetUserApiKeysHandler = async ({ caller, services }) => ({
  status: 200,
  body: await listUserApiKeys(services.store.db, caller),
});

export const delete_user_api_key: DeleteUserApiKeyHandler = async ({ path, caller, services }) => {
  await deleteUserApiKey(services.store.db, caller, path.api_key_id);
  return { status: 204, body: undefined };
};
