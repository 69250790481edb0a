// The statements every search runs (its page's rows, BM25's statistics, the dataset's changes),
// sent straight to a connection of knex's pool. Through knex's runner, each also paid for the
// builder, the placing of its bindings and a chain of promises: under the load suite, knex's own
// work on the service's thread was about as much as the driver's for them. The text is written
// once with $n placeholders, and listeners of knex's 'query' event still see every statement
// (lookups.ts, activity.ts, and tests that count statements).
import type { Knex } from 'knex';
import type pg from 'pg';

/** A statement the driver prepares once per connection and then only binds. */
export interface NamedStatement {
  name: string;
  text: string;
}

/** `text` written with `?` placeholders, as knex takes them; each `?` becomes the next `$n`. */
export function namedStatement(name: string, text: string): NamedStatement {
  let n = 0;
  return { name, text: text.replace(/\?/g, () => `$${++n}`) };
}

/** The statement's rows, on a connection of `db`'s pool (never inside a transaction: `db` is the pool). */
export async function runNamed<Row>(db: Knex, statement: NamedStatement, values: unknown[]): Promise<Row[]> {
  const connection = (await db.client.acquireConnection()) as pg.Client;
  try {
    db.emit('query', { sql: statement.text, bindings: values, name: statement.name });
    const result = await connection.query<Row & pg.QueryResultRow>({ name: statement.name, text: statement.text, values });
    return result.rows;
  } finally {
    await db.client.releaseConnection(connection);
  }
}
