// The API's ChunkFilter as conditions on the `chunks` table. Every filter is evaluated here, in
// PostgreSQL (the system of record), whatever engine matches the query, so bulk delete, scroll and
// every search mode filter identically.
//
//   must: every condition holds · should: at least one holds (when non-empty) · must_not: none holds
//
// A chunk lacking the field (no num_value, no location, no such metadata key) does not match a
// condition on it: in `must` and `should` a NULL condition already excludes the row, so they stay
// bare (and an index on the column serves them); under `must_not` a condition is made NULL-safe
// (`not coalesce(..., false)`), so that chunk is kept.
// A field condition with several operators (say `range` and `match_any`) needs all of them to hold.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { groupMembership, idCondition, numberColumn, tagColumn, textColumn, timeColumn } from './filters/columns.js';
import { OPERATORS, type Context, type FieldKind } from './filters/field.js';
import { location } from './filters/geo.js';
import { metadataKey } from './filters/metadata.js';
import { all, any, sql, trusted, type Sql } from './filters/sql.js';
import { fail, isObject } from './filters/values.js';

const FIELDS: Record<string, FieldKind> = {
  tag_set: tagColumn('tag_set'),
  link: textColumn('link'),
  tracking_id: textColumn('tracking_id'),
  num_value: numberColumn('num_value'),
  weight: numberColumn('weight'),
  time_stamp: timeColumn('time_stamp', false),
  created_at: timeColumn('created_at', true),
  location,
  group_ids: groupMembership('id'),
  group_tracking_ids: groupMembership('tracking_id'),
};
const FILTERABLE = `${Object.keys(FIELDS).join(', ')} or metadata.<key>`;

/** Whether the filter has any condition at all (an empty or absent filter passes every chunk). */
export function hasConditions(filter: T.ChunkFilter | null | undefined): boolean {
  return !!filter && [filter.must, filter.should, filter.must_not].some((conditions) => (conditions?.length ?? 0) > 0);
}

/**
 * Adds the filter's conditions to a query over `chunks` aliased `alias` (default 'chunks'). Throws
 * HttpError 400 naming the condition (under `path`, e.g. `filters` for search requests) for an
 * unsupported field or a malformed condition; the query is untouched then.
 */
export function applyChunkFilter(query: Knex.QueryBuilder, filter: T.ChunkFilter | null | undefined, alias = 'chunks', path = 'filter'): Knex.QueryBuilder {
  for (const clause of compile(filter, alias, path)) query.whereRaw(clause.text, clause.values as Knex.RawBinding[]);
  return query;
}

/** Validates a filter without running it (same errors), for early refusal. */
export function validateChunkFilter(filter: T.ChunkFilter | null | undefined, path = 'filter'): void {
  compile(filter, 'chunks', path);
}

/** The clauses to AND into the query: one per `must` and `must_not` condition, one for all of `should`. */
function compile(filter: T.ChunkFilter | null | undefined, alias: string, path: string): Sql[] {
  // The alias is the caller's code, not user input, but it is spliced into SQL: hold it to a plain identifier.
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(alias)) throw new Error(`not a table alias: ${alias}`);
  if (filter == null) return [];
  if (!isObject(filter)) fail(path, 'must be an object with must, should and must_not');
  const column = (name: string) => trusted(`"${alias}"."${name}"`);
  const conditions = (clause: 'must' | 'should' | 'must_not'): Sql[] => {
    const list: unknown = filter[clause];
    if (list == null) return [];
    if (!Array.isArray(list)) fail(`${path}.${clause}`, 'must be a list of conditions');
    return list.map((condition, i) => compileCondition(condition, { path: `${path}.${clause}[${i}]`, column }));
  };
  const should = conditions('should');
  return [...conditions('must'), ...(should.length > 0 ? [any(should)] : []), ...conditions('must_not').map((c) => sql`not coalesce(${c}, false)`)];
}

function compileCondition(condition: unknown, context: Context): Sql {
  if (!isObject(condition)) fail(context.path, 'must be a condition object');
  const isField = condition.field != null;
  const isId = condition.ids != null || condition.tracking_ids != null;
  if (isField && isId) fail(context.path, 'has both field and ids/tracking_ids; give them as two conditions');
  if (isId) return idCondition(condition as T.HasChunkIdCondition, context);
  if (!isField) fail(context.path, 'is neither a field condition (field and an operator) nor an id condition (ids or tracking_ids)');
  return compileField(condition as T.FieldCondition, context);
}

function compileField(condition: T.FieldCondition, context: Context): Sql {
  const { field } = condition;
  if (typeof field !== 'string') fail(`${context.path}.field`, 'must be a string');
  const kind = FIELDS[field] ?? (field === 'metadata' || field.startsWith('metadata.') ? metadataKind(field, context) : undefined);
  if (!kind) fail(context.path, `field "${field}" is not filterable (use ${FILTERABLE})`);
  const given = OPERATORS.filter((operator) => condition[operator] != null);
  if (given.length === 0) fail(context.path, `gives no operator for field "${field}" (use ${kind.operators.join(', ')})`);
  for (const operator of given) {
    if (!kind.operators.includes(operator)) fail(context.path, `${operator} does not apply to field "${field}" (use ${kind.operators.join(', ')})`);
  }
  return all(given.map((operator) => kind.build(operator, condition, context)));
}

/** `metadata.a.b` → the key path ['a', 'b']. A key containing a dot cannot be named. */
function metadataKind(field: string, context: Context): FieldKind {
  const keys = field.split('.').slice(1);
  if (keys.length === 0 || keys.some((key) => key === '')) {
    fail(context.path, `field "${field}" is not filterable: name a metadata key as metadata.<key> or metadata.<key>.<nested key>`);
  }
  return metadataKey(keys);
}
