// What every kind of field condition shares: its operators, and where it is in the filter and the query.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { Sql } from './sql.js';

export const OPERATORS = ['match_any', 'match_all', 'range', 'date_range', 'boolean', 'geo_radius', 'geo_bounding_box', 'geo_polygon'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Context {
  /** Where the condition is in the request, e.g. `filter.must[1]`, for error messages. */
  path: string;
  /** A column of the filtered chunk row, qualified by the query's alias. */
  column(name: string): Sql;
}

/** A kind of field: the operators it takes and the SQL of one of them (never NULL-safe on its own). */
export interface FieldKind {
  operators: readonly Operator[];
  build(operator: Operator, condition: T.FieldCondition, context: Context): Sql;
}
