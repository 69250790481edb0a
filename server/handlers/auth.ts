// Handlers of the auth operations (browser sign-in is not offered: API keys only).
import type { CreateApiOnlyUserHandler, GetMeHandler } from '../../generated/handlers.js';
import { createApiOnlyUser, getMe } from '../domain/users.js';

export const get_me: GetMeHandler = async ({ caller, services }) => ({
  status: 200,
  body: await getMe(services.store.db, caller),
});

export const create_api_only_user: CreateApiOnlyUserHandler = async ({ body, caller, services }) => ({
  status: 200,
  body: await createApiOnlyUser(services.store.db, caller, body),
});
