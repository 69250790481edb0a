// Searches that involve groups, made of the chunk search's steps (server/search/index.ts):
//   within one group  the chunk search with the group's membership ANDed into the filter;
//   over groups       a window of chunk hits gathered by group (./gather.ts), a page of groups,
//                     each with its best chunks; autocomplete is the same with prefix matching.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { Caller } from '../../auth/caller.js';
import type { ApiVersion } from '../../domain/chunks/records.js';
import type { DatasetRow } from '../../domain/datasets.js';
import { findGroup, groupAndFileRecord, type GroupRow } from '../../domain/groups.js';
import { badRequest } from '../../errors.js';
import type { Services } from '../../services.js';
import { inGroup, narrowFilter } from '../filters/combine.js';
import { findHits, loadResults, recordSearch, searchResponse, type FoundHits, type SearchOutcome } from '../index.js';
import { pageSizeOf, withKeyDefaults, type SearchPayload } from '../request.js';
import type { Hit } from '../types.js';
import { fillGroups, groupRows, groupsHolding, rankGroups, type GroupHits } from './gather.js';
import { searchShapes, v1Group, v2Group, type FoundGroup } from './responses.js';

/** Chunks shown per group when the request does not say (the reference's default). */
export const DEFAULT_GROUP_SIZE = 3;

export type GroupSearchPayload = T.SearchOverGroupsReqPayload | T.AutocompleteSearchOverGroupsReqPayload;

export interface GroupSearchOptions {
  /** Autocomplete: the last word is a prefix. */
  prefix: boolean;
  page: number;
  getTotalPages: boolean;
  extendResults?: boolean;
  /** The search type recorded for analytics, instead of the search's own (a RAG call's search). */
  recordAs?: string;
}

export interface GroupSearchOutcome {
  id: string;
  groups: FoundGroup[];
  totalPages: number;
  correctedQuery: string | null;
  payload: SearchPayload;
}

export interface WithinGroupOutcome {
  group: GroupRow;
  outcome: SearchOutcome;
}

/**
 * The API key's default parameters applied once, here, and a caller without them for the steps:
 * findHits would apply them again to the narrowed request, and a key's `filters` would then replace
 * the group condition.
 */
function keyApplied<P extends SearchPayload>(caller: Caller, request: P): { payload: P; caller: Caller } {
  return { payload: withKeyDefaults(caller, request), caller: caller.kind === 'key' ? { ...caller, defaultParams: null } : caller };
}

async function groupToSearch(services: Services, dataset: DatasetRow, request: T.SearchWithinGroupReqPayload): Promise<GroupRow> {
  if (request.group_id != null) return findGroup(services.store.db, dataset.id, { id: request.group_id });
  if (request.group_tracking_id != null) return findGroup(services.store.db, dataset.id, { trackingId: request.group_tracking_id });
  throw badRequest('group_id or group_tracking_id: give one, the group to search in');
}

export async function searchWithinGroup(
  services: Services,
  dataset: DatasetRow,
  caller: Caller,
  request: T.SearchWithinGroupReqPayload,
): Promise<WithinGroupOutcome> {
  const group = await groupToSearch(services, dataset, request);
  const keyed = keyApplied(caller, request);
  const { payload } = keyed;
  const scoped = { ...payload, filters: narrowFilter(payload.filters, { must: [inGroup(group.id)] }) };
  const getTotalPages = payload.get_total_pages ?? false;
  const found = await findHits(services, dataset, keyed.caller, scoped, { prefix: false, page: payload.page ?? 1, getTotalPages });
  const results = await loadResults(services, dataset, found, found.hits);
  // Recorded with the request as sent (the group named by group_id or group_tracking_id).
  const id = recordSearch(services, dataset, { ...found, payload }, results, `search_within_groups_${found.type}`);
  const totalPages = getTotalPages ? Math.ceil(found.total / Math.max(found.pageSize, 1)) : 0;
  return { group, outcome: { id, results, totalPages, correctedQuery: found.correctedQuery, payload } };
}

export async function searchOverGroups(
  services: Services,
  dataset: DatasetRow,
  caller: Caller,
  request: GroupSearchPayload,
  options: GroupSearchOptions,
): Promise<GroupSearchOutcome> {
  const started = performance.now();
  const db = services.store.db;
  const keyed = keyApplied(caller, request);
  const { payload } = keyed;
  const pageSize = pageSizeOf(dataset, payload); // groups per page
  const groupSize = payload.group_size ?? DEFAULT_GROUP_SIZE;
  const page = Math.max(options.page, 1);
  const chunkHits = (search: SearchPayload, n: number) =>
    findHits(services, dataset, keyed.caller, search, {
      prefix: options.prefix,
      extendResults: options.extendResults,
      page: 1,
      getTotalPages: false,
      pageSize: n,
    });

  let window: FoundHits | undefined;
  const ranked = await rankGroups(
    async (size) => (window = await chunkHits(payload, size)).hits,
    (ids) => groupsHolding(db, dataset.id, ids),
    options.getTotalPages ? Infinity : page * pageSize,
    groupSize,
  );
  const found = window!;
  const onPage = ranked.groups.slice((page - 1) * pageSize, page * pageSize);
  const filled = await fillGroups(
    onPage,
    groupSize,
    ranked.exhausted,
    async (groupId, n) => (await chunkHits({ ...payload, filters: narrowFilter(payload.filters, { must: [inGroup(groupId)] }) }, n)).hits,
  );
  const groups = await loadGroups(services, dataset, found, filled);
  const results = groups.flatMap((g) => g.results);
  const id = recordSearch(
    services,
    dataset,
    { ...found, payload, started },
    results,
    options.recordAs ?? `${options.prefix ? 'autocomplete' : 'search_over_groups'}_${found.type}`,
  );
  const totalPages = options.getTotalPages ? Math.ceil(ranked.groups.length / Math.max(pageSize, 1)) : 0;
  return { id, groups, totalPages, correctedQuery: found.correctedQuery, payload };
}

/** The groups' rows and their hits' chunks (each chunk loaded once), in the groups' order. */
async function loadGroups(services: Services, dataset: DatasetRow, found: FoundHits, groups: GroupHits[]): Promise<FoundGroup[]> {
  const rows = await groupRows(
    services.store.db,
    dataset.id,
    groups.map((g) => g.groupId),
  );
  const unique = new Map<string, Hit>();
  for (const hit of groups.flatMap((g) => g.hits)) if (!unique.has(hit.id)) unique.set(hit.id, hit);
  const loaded = new Map((await loadResults(services, dataset, found, [...unique.values()])).map((r) => [r.row.id, r]));
  return groups.flatMap((group) => {
    const row = rows.get(group.groupId);
    if (!row) return []; // deleted since the search
    return [{ row, results: group.hits.flatMap((hit) => loaded.get(hit.id) ?? []) }];
  });
}

export function withinGroupResponse({ group, outcome }: WithinGroupOutcome, version: ApiVersion): T.SearchGroupResponseTypes {
  if (version === 'V2') return searchResponse(outcome, 'V2') as T.SearchWithinGroupResponseBody;
  const v1 = searchResponse(outcome, 'V1') as T.SearchChunkQueryResponseBody;
  return { bookmarks: v1.score_chunks, group: groupAndFileRecord(group), total_pages: v1.total_chunk_pages, corrected_query: v1.corrected_query };
}

export function groupSearchResponse(outcome: GroupSearchOutcome, version: ApiVersion): T.SearchOverGroupsResponseTypes {
  const shapes = searchShapes(outcome.payload);
  if (version === 'V2') {
    return { id: outcome.id, results: outcome.groups.map((g) => v2Group(g, shapes)), total_pages: outcome.totalPages, corrected_query: outcome.correctedQuery };
  }
  return { group_chunks: outcome.groups.map((g) => v1Group(g, shapes)), total_chunk_pages: outcome.totalPages, corrected_query: outcome.correctedQuery };
}
