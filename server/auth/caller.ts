// Who is calling: the instance administrator (the ADMIN_API_KEY) or an organization's API key.

export type Role = 0 | 1 | 2;
export const roleNames: Record<Role, string> = { 0: 'read', 1: 'admin', 2: 'owner' };

export type Caller =
  | { kind: 'admin'; role: 2 }
  | {
      kind: 'key';
      keyId: string;
      organizationId: string;
      role: Role;
      /** Datasets the key may use; empty means all of its organization's. */
      datasetIds: string[];
      /** Routes (`METHOD /path`) the key may call; empty means all. */
      scopes: string[];
      defaultParams: Record<string, unknown> | null;
    };

/** The administrator owns every organization; a key belongs to one. */
export function belongsTo(caller: Caller, organizationId: string): boolean {
  return caller.kind === 'admin' || caller.organizationId === organizationId;
}
