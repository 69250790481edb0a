// Who is calling: the instance administrator (the ADMIN_API_KEY, a user that owns every
// organization) or an API key of one organization, which may belong to a user.

export type Role = 0 | 1 | 2;
export const roleNames: Record<Role, string> = { 0: 'read', 1: 'admin', 2: 'owner' };

export type Caller =
  | {
      kind: 'admin';
      role: 2;
      /** The administrator's user row (`is_instance_admin`). */
      userId: string;
    }
  | {
      kind: 'key';
      keyId: string;
      organizationId: string;
      /**
       * The key's effective role: its own, lowered to its user's current role in the organization when
       * the key belongs to a user.
       */
      role: Role;
      /** Datasets the key may use; empty means all of its organization's. */
      datasetIds: string[];
      /** Routes (`METHOD /path`) the key may call; empty means all. */
      scopes: string[];
      /** Routes the key's user may call in the organization; empty means all (and for keys of no user). */
      memberScopes: string[];
      defaultParams: Record<string, unknown> | null;
      /** The user the key belongs to; null for an organization key. */
      userId: string | null;
      /** When the key stops working; null when it does not expire. */
      expiresAt: Date | null;
    };

/** The administrator owns every organization; a key belongs to one. */
export function belongsTo(caller: Caller, organizationId: string): boolean {
  return caller.kind === 'admin' || caller.organizationId === organizationId;
}

/** Whether a route is allowed by a scope list (empty allows every route). */
export function scopeAllows(scopes: readonly string[], route: string): boolean {
  return scopes.length === 0 || scopes.includes(route);
}
