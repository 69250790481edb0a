// A request's filter narrowed by conditions of the service's own (the chunks of one group, chunks
// other than some examples): appended to `must` and `must_not`, so the request's own conditions keep
// their positions in error messages and `should` keeps its meaning.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { validateChunkFilter } from '../filters.js';

export interface ExtraConditions {
  must?: T.ConditionType[];
  must_not?: T.ConditionType[];
}

/** The filter with `extra` ANDed in; the request's filter is validated first, under `path`. */
export function narrowFilter(filter: T.ChunkFilter | null | undefined, extra: ExtraConditions, path = 'filters'): T.ChunkFilter {
  validateChunkFilter(filter, path);
  return {
    must: [...(filter?.must ?? []), ...(extra.must ?? [])],
    should: filter?.should ?? null,
    must_not: [...(filter?.must_not ?? []), ...(extra.must_not ?? [])],
  };
}

/** Chunks bookmarked in the group. */
export const inGroup = (groupId: string): T.ConditionType => ({ field: 'group_ids', match_any: [groupId] });

/** Chunks with one of these ids. */
export const withIds = (ids: string[]): T.ConditionType => ({ ids });
