// Ranked chunk hits gathered by the groups that hold them, the way group-oriented searches and group
// recommendations present them: each group once, in the order of its best hit, with its hits in rank
// order. A chunk in several groups counts for each of them; a chunk in none is not shown.
//
// The groups come from a window of the best chunk hits. It starts at MIN_GROUP_WINDOW (or more, when
// the page needs more groups of more chunks) and grows fourfold while the page is not full and the
// window was (so more hits exist), up to MAX_GROUP_WINDOW: a group whose best chunk ranks below that is
// not found. A group with fewer hits in the window than it should show is completed by a search
// restricted to it, unless the window held every hit there is.
import type { Knex } from 'knex';
import type { GroupRow } from '../../domain/groups.js';
import type { Hit } from '../types.js';

export const MIN_GROUP_WINDOW = 100;
export const MAX_GROUP_WINDOW = 1000;
/** Chunk hits fetched per group wanted and per chunk shown, for the first window. */
const HITS_PER_SHOWN_CHUNK = 2;

export interface GroupHits {
  groupId: string;
  hits: Hit[];
}

export interface RankedGroups {
  groups: GroupHits[];
  /** The last window held every hit there is (it was not full). */
  exhausted: boolean;
}

/** The hits gathered by group: groups by their best hit, hits in rank order. */
export function gatherByGroup(hits: Hit[], groupsOf: Map<string, string[]>): GroupHits[] {
  const byGroup = new Map<string, Hit[]>();
  for (const hit of hits) {
    for (const groupId of groupsOf.get(hit.id) ?? []) {
      const list = byGroup.get(groupId);
      if (list) list.push(hit);
      else byGroup.set(groupId, [hit]);
    }
  }
  return [...byGroup].map(([groupId, groupHits]) => ({ groupId, hits: groupHits }));
}

/** The groups of the dataset holding each of the chunks (chunks in no group are left out). */
export async function groupsHolding(db: Knex, datasetId: string, chunkIds: string[]): Promise<Map<string, string[]>> {
  const held = new Map<string, string[]>();
  if (chunkIds.length === 0) return held;
  const rows: { chunk_id: string; group_id: string }[] = await db('chunk_group_bookmarks as b')
    .join('chunk_groups as g', 'g.id', 'b.group_id')
    .where('g.dataset_id', datasetId)
    .whereRaw('b.chunk_id = any(?::uuid[])', [[...new Set(chunkIds)]])
    .orderBy([{ column: 'b.chunk_id' }, { column: 'g.id' }])
    .select('b.chunk_id', 'b.group_id');
  for (const row of rows) {
    const list = held.get(row.chunk_id);
    if (list) list.push(row.group_id);
    else held.set(row.chunk_id, [row.group_id]);
  }
  return held;
}

/** The first window: enough hits for `groups` groups of `groupSize` chunks, within the bounds. */
export function firstWindow(groups: number, groupSize: number): number {
  if (!Number.isFinite(groups)) return MAX_GROUP_WINDOW;
  return Math.min(MAX_GROUP_WINDOW, Math.max(MIN_GROUP_WINDOW, groups * Math.max(groupSize, 1) * HITS_PER_SHOWN_CHUNK));
}

/**
 * The groups of the best hits `fetch` gives for a window size, at least `wanted` of them when the
 * hits allow (Infinity: every group within the largest window).
 */
export async function rankGroups(
  fetch: (window: number) => Promise<Hit[]>,
  groupsOf: (chunkIds: string[]) => Promise<Map<string, string[]>>,
  wanted: number,
  groupSize: number,
): Promise<RankedGroups> {
  let window = firstWindow(wanted, groupSize);
  for (;;) {
    const hits = await fetch(window);
    const groups = gatherByGroup(hits, await groupsOf(hits.map((h) => h.id)));
    const exhausted = hits.length < window;
    if (groups.length >= wanted || exhausted || window >= MAX_GROUP_WINDOW) return { groups, exhausted };
    window = Math.min(MAX_GROUP_WINDOW, window * 4);
  }
}

/**
 * Each group with its best `groupSize` hits. A group short of them in a window that did not hold
 * every hit gets its hits from `fetchInGroup` (a search restricted to the group), one group at a time.
 */
export async function fillGroups(
  groups: GroupHits[],
  groupSize: number,
  exhausted: boolean,
  fetchInGroup: (groupId: string, n: number) => Promise<Hit[]>,
): Promise<GroupHits[]> {
  const filled: GroupHits[] = [];
  for (const group of groups) {
    if (groupSize === 0) filled.push({ groupId: group.groupId, hits: [] });
    else if (group.hits.length >= groupSize || exhausted) filled.push({ groupId: group.groupId, hits: group.hits.slice(0, groupSize) });
    else {
      const fetched = await fetchInGroup(group.groupId, groupSize);
      // The window's hits stand if the restricted search finds fewer (chunks deleted meanwhile).
      filled.push({ groupId: group.groupId, hits: (fetched.length >= group.hits.length ? fetched : group.hits).slice(0, groupSize) });
    }
  }
  return filled;
}

/** The rows of the groups, by id (groups deleted meanwhile are missing). */
export async function groupRows(db: Knex, datasetId: string, groupIds: string[]): Promise<Map<string, GroupRow>> {
  if (groupIds.length === 0) return new Map();
  const rows = await db<GroupRow>('chunk_groups').where({ dataset_id: datasetId }).whereRaw('id = any(?::uuid[])', [groupIds]);
  return new Map(rows.map((row) => [row.id, row]));
}
