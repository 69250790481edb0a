// The one key a public dataset's page holds: read-only, limited to the dataset and to the routes the
// page calls. It is an ordinary key of the organization (listed with its keys), made the first time
// the page is served, deleted when the dataset stops being public or is deleted. Its secret is kept
// in public_page_keys, since the page publishes it anyway.
import type { Knex } from 'knex';
import { hashKey, insertApiKey } from '../apiKeys.js';

/** What the page calls, and so all its key may call. */
export const PUBLIC_PAGE_ROUTES: readonly string[] = Object.freeze([
  'POST /api/chunk/search',
  'POST /api/chunk/autocomplete',
  'POST /api/dataset/get_all_tags',
  'POST /api/chunk/generate',
]);

export function publicPageKeyName(datasetId: string): string {
  return `public page of dataset ${datasetId}`;
}

/**
 * The page's key of the dataset. One is made when there is none, or when the one there grants
 * something else than the page needs now (a page that calls more routes than when its key was made).
 */
export async function publicPageKey(db: Knex, dataset: { id: string; organization_id: string }): Promise<string> {
  const current = await currentKey(db, dataset.id);
  if (current) return current;
  return db.transaction(async (trx) => {
    // One maker at a time: a second visitor waits here, then finds the first one's key.
    await trx('datasets').where({ id: dataset.id }).forUpdate().first('id');
    const made = await currentKey(trx, dataset.id);
    if (made) return made;
    await revokePublicPageKey(trx, dataset.id);
    const value = await insertApiKey(trx, {
      organizationId: dataset.organization_id,
      userId: null,
      name: publicPageKeyName(dataset.id),
      role: 0,
      datasetIds: [dataset.id],
      scopes: [...PUBLIC_PAGE_ROUTES],
    });
    const { id } = await trx('api_keys')
      .where({ key_hash: hashKey(value) })
      .first('id');
    await trx('public_page_keys').insert({ dataset_id: dataset.id, api_key_id: id, api_key: value });
    return value;
  });
}

/** Deletes the page's key of the dataset (its row goes with it); none is no error. */
export async function revokePublicPageKey(db: Knex, datasetId: string): Promise<void> {
  await db('api_keys')
    .whereIn('id', db('public_page_keys').select('api_key_id').where({ dataset_id: datasetId }))
    .del();
}

async function currentKey(db: Knex, datasetId: string): Promise<string | null> {
  const row: { api_key: string; role: number; dataset_ids: string[] | null; scopes: string[] | null; expires_at: Date | null } | undefined = await db(
    'public_page_keys as p',
  )
    .join('api_keys as k', 'k.id', 'p.api_key_id')
    .where('p.dataset_id', datasetId)
    .first('p.api_key', 'k.role', 'k.dataset_ids', 'k.scopes', 'k.expires_at');
  if (!row) return null;
  const grants =
    row.role === 0 &&
    row.expires_at === null &&
    row.dataset_ids?.length === 1 &&
    row.dataset_ids[0] === datasetId &&
    sameSet(row.scopes ?? [], PUBLIC_PAGE_ROUTES);
  return grants ? row.api_key : null;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && b.every((x) => a.includes(x));
}
