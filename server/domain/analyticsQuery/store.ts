// Runs a compiled analytics query: in a read-only transaction, in UTC, stopped after
// STATEMENT_TIMEOUT_MS, and refused before it starts when the planner expects it to cost more than
// MAX_COST (PGlite enforces no statement timeout, and runs one statement at a time: a query joining
// large tables without a condition would hold the whole embedded database). What the database refuses about the query itself (a value of the wrong type
// for its column, an operator the column's type lacks, a column that is neither grouped nor
// aggregated) is the caller's mistake: 400 with the database's words.
import type { Knex } from 'knex';
import { badRequest } from '../../errors.js';
import type { Sql } from './compile.js';

export const STATEMENT_TIMEOUT_MS = 10_000;
/** The planner's cost units: a scan and grouping of a few million rows is well under it. */
export const MAX_COST = 5_000_000;

/** PostgreSQL types node-postgres answers as text that are numbers: int8 (count, sum of integers) and numeric (avg). */
const NUMERIC_TYPES = new Set([20, 1700]);

/**
 * SQLSTATE classes that mean the query was wrong, not the service: 22 (data exception: a value
 * of the wrong type), 42 (a type without the operator, an ungrouped column), 57014 (timed out).
 */
const REFUSED = /^(22...|42...|57014)$/;

export async function runQuery(db: Knex, query: Sql): Promise<Record<string, unknown>[]> {
  try {
    return await db.transaction(
      async (trx) => {
        await trx.raw(`set local statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
        await trx.raw(`set local timezone = 'UTC'`);
        const plan = await trx.raw(`explain (format json) ${query.text}`, query.bindings as Knex.RawBinding[]);
        const cost = Number(plan.rows[0]['QUERY PLAN'][0].Plan['Total Cost']);
        if (cost > MAX_COST)
          throw badRequest(
            `the query would cost about ${Math.round(cost).toLocaleString('en')} (at most ${MAX_COST.toLocaleString('en')}): join on a condition, filter or aggregate more`,
          );
        const result: { rows: Record<string, unknown>[]; fields: { name: string; dataTypeID: number }[] } = await trx.raw(
          query.text,
          query.bindings as Knex.RawBinding[],
        );
        const numeric = result.fields.filter((f) => NUMERIC_TYPES.has(f.dataTypeID)).map((f) => f.name);
        for (const row of result.rows) for (const name of numeric) if (typeof row[name] === 'string') row[name] = Number(row[name]);
        return result.rows;
      },
      { readOnly: true },
    );
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && REFUSED.test(code)) {
      const message = code === '57014' ? `it ran longer than ${STATEMENT_TIMEOUT_MS / 1000} s; narrow it` : (error as Error).message;
      throw badRequest(`the query was refused: ${message}`);
    }
    throw error;
  }
}
