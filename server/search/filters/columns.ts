// Conditions on the chunk's own columns, its group memberships and its ids.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { Context, FieldKind } from './field.js';
import { all, any, COMPARISONS, sql, trusted, type Sql } from './sql.js';
import { asNumbers, asTexts, asUuids, bounds, fail, matchValues, readInstant, readNumber } from './values.js';

/** `link`, `tracking_id`: equals any of the values; match_all equals every one (so they must all be the same). */
export const textColumn = (name: string): FieldKind => ({
  operators: ['match_any', 'match_all'],
  build: (operator, condition, context) => {
    const values = asTexts(matchValues(condition[operator], `${context.path}.${operator}`));
    return sql`${context.column(name)} = ${trusted(operator === 'match_any' ? 'any' : 'all')}(${values}::text[])`;
  },
});

/** `tag_set`: has any (overlap) or all (containment) of the tags; tags compare exactly. */
export const tagColumn = (name: string): FieldKind => ({
  operators: ['match_any', 'match_all'],
  build: (operator, condition, context) => {
    const tags = asTexts(matchValues(condition[operator], `${context.path}.${operator}`));
    return sql`${context.column(name)} ${trusted(operator === 'match_any' ? '&&' : '@>')} ${tags}::text[]`;
  },
});

/** `num_value`, `weight`: equal to any / every value, or within a range. */
export const numberColumn = (name: string): FieldKind => ({
  operators: ['match_any', 'match_all', 'range'],
  build: (operator, condition, context) => {
    const column = context.column(name);
    const path = `${context.path}.${operator}`;
    if (operator === 'range') {
      return all(bounds(condition.range, path, readNumber).map(({ bound, value }) => sql`${column} ${trusted(COMPARISONS[bound])} ${value}::float8`));
    }
    const numbers = asNumbers(matchValues(condition[operator], path), path);
    return sql`${column} = ${trusted(operator === 'match_any' ? 'any' : 'all')}(${numbers}::float8[])`;
  },
});

/**
 * `time_stamp` (zone-less: a UTC wall time) and `created_at` (an instant): a date range. Bounds are
 * instants; against a zone-less column they are read as UTC wall time, as the column is written.
 */
export const timeColumn = (name: string, zoned: boolean): FieldKind => ({
  operators: ['date_range'],
  build: (_operator, condition, context) =>
    all(
      bounds(condition.date_range, `${context.path}.date_range`, readInstant).map(({ bound, value }) => {
        const instant = zoned ? sql`${value}::timestamptz` : sql`(${value}::timestamptz at time zone 'UTC')`;
        return sql`${context.column(name)} ${trusted(COMPARISONS[bound])} ${instant}`;
      }),
    ),
});

/**
 * `group_ids` / `group_tracking_ids`: the chunk is bookmarked in any of the groups (match_any) or in
 * every one of them (match_all: as many distinct listed groups as were listed).
 */
export const groupMembership = (by: 'id' | 'tracking_id'): FieldKind => ({
  operators: ['match_any', 'match_all'],
  build: (operator, condition, context) => {
    const path = `${context.path}.${operator}`;
    const values = matchValues(condition[operator], path);
    const listed = by === 'id' ? asUuids(values, path).map((id) => id.toLowerCase()) : asTexts(values);
    const wanted = by === 'id' ? sql`f_g.id = any(${listed}::uuid[])` : sql`f_g.tracking_id = any(${listed}::text[])`;
    // Joined through chunk_groups on the chunk's dataset, so a tracking id names a group of that dataset only.
    const memberships = sql`from chunk_group_bookmarks f_b join chunk_groups f_g on f_g.id = f_b.group_id and f_g.dataset_id = ${context.column('dataset_id')}
      where f_b.chunk_id = ${context.column('id')} and ${wanted}`;
    if (operator === 'match_any') return sql`exists (select 1 ${memberships})`;
    return sql`(select count(distinct f_g.${trusted(by)}) ${memberships}) = ${new Set(listed).size}`;
  },
});

/**
 * HasChunkIDCondition: the chunk's id is in `ids` OR its tracking id is in `tracking_ids`. With both
 * lists given, either may name the chunk (the reference service silently ignored `tracking_ids` then).
 */
export function idCondition(condition: T.HasChunkIdCondition, context: Context): Sql {
  const parts: Sql[] = [];
  const { ids, tracking_ids } = condition;
  if (ids != null) {
    if (!Array.isArray(ids)) fail(`${context.path}.ids`, 'must be a list of UUIDs');
    if (ids.length > 0) parts.push(sql`${context.column('id')} = any(${asUuids(ids, `${context.path}.ids`)}::uuid[])`);
  }
  if (tracking_ids != null) {
    if (!Array.isArray(tracking_ids)) fail(`${context.path}.tracking_ids`, 'must be a list of strings');
    tracking_ids.forEach((value, i) => {
      if (typeof value !== 'string') fail(`${context.path}.tracking_ids[${i}]`, 'must be a string');
    });
    if (tracking_ids.length > 0) parts.push(sql`${context.column('tracking_id')} = any(${tracking_ids}::text[])`);
  }
  if (parts.length === 0) fail(context.path, 'ids and tracking_ids name no chunk (give at least one id or tracking id)');
  return any(parts);
}
