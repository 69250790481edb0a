// Named prepared statements through the embedded database: its connections share PGlite's one
// session, so each one's statement names are its own (store/sessionStatements.ts), and a connection
// that ends leaves none of them behind.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedDatabase, startEmbeddedDatabase } from '../../server/store/embedded.js';
import { SessionStatements } from '../../server/store/sessionStatements.js';
import { mode } from '../support/env.js';

/** Each message of a unit: its type and its body. */
function messages(unit: Buffer): { type: string; body: Buffer }[] {
  const out: { type: string; body: Buffer }[] = [];
  for (let at = 0; at < unit.length; ) {
    const length = unit.readInt32BE(at + 1);
    out.push({ type: String.fromCharCode(unit[at]), body: unit.subarray(at + 5, at + 1 + length) });
    at += 1 + length;
  }
  return out;
}

describe("a connection's statement names", () => {
  it('are prefixed in Parse, Bind, Describe and Close, the rest of each message unchanged', () => {
    const statements = new SessionStatements(7);
    const unit = Buffer.concat([
      serialize.parse({ name: 'rows', text: 'select $1::int', types: [] }),
      serialize.bind({ portal: '', statement: 'rows', values: ['5'] }),
      serialize.describe({ type: 'S', name: 'rows' }),
      serialize.describe({ type: 'P', name: '' }),
      serialize.execute({ portal: '', rows: 0 }),
      serialize.close({ type: 'S', name: 'other' }),
      serialize.sync(),
    ]);
    const renamed = messages(statements.rename(unit));
    const expected = messages(
      Buffer.concat([
        serialize.parse({ name: 'c7_rows', text: 'select $1::int', types: [] }),
        serialize.bind({ portal: '', statement: 'c7_rows', values: ['5'] }),
        serialize.describe({ type: 'S', name: 'c7_rows' }),
        serialize.describe({ type: 'P', name: '' }),
        serialize.execute({ portal: '', rows: 0 }),
        serialize.close({ type: 'S', name: 'c7_other' }),
        serialize.sync(),
      ]),
    );
    expect(renamed).toEqual(expected);
    // What it prepared and did not close is closed when the connection ends.
    expect(messages(statements.closing()!)).toEqual(messages(Buffer.concat([serialize.close({ type: 'S', name: 'c7_rows' }), serialize.sync()])));
  });

  it('leave a unit without named statements as it is', () => {
    const statements = new SessionStatements(1);
    const unit = Buffer.concat([
      serialize.parse({ text: 'select 1', types: [] }),
      serialize.bind({}),
      serialize.describe({ type: 'P', name: '' }),
      serialize.execute({}),
      serialize.sync(),
    ]);
    expect(statements.rename(unit)).toBe(unit);
    expect(statements.closing()).toBeNull();
  });
});

describe.runIf(mode === 'embedded')('named statements in the embedded database', () => {
  let dir: string;
  let database: EmbeddedDatabase;
  const clients: pg.Client[] = [];
  const connect = async () => {
    const client = new pg.Client(database.connection as unknown as pg.ClientConfig);
    await client.connect();
    clients.push(client);
    return client;
  };
  const prepared = async (client: pg.Client) =>
    (await client.query<{ name: string }>('select name from pg_prepared_statements order by name')).rows.map((r) => r.name);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svc-statements-'));
    database = await startEmbeddedDatabase(dir);
  });
  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => {});
    await database?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keep the same name on two connections apart, and close them when a connection ends', async () => {
    const [a, b] = [await connect(), await connect()];
    // The same name, two texts, used by both at once: each connection gets its own statement's answers.
    const run = async (client: pg.Client, text: string) => {
      const answers: unknown[] = [];
      for (let i = 0; i < 10; i++) answers.push((await client.query({ name: 'same', text, values: [i] })).rows[0].n);
      return answers;
    };
    const [fromA, fromB] = await Promise.all([run(a, 'select $1::int + 1 as n'), run(b, "select $1::text || '!' as n")]);
    expect(fromA).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(fromB).toEqual(Array.from({ length: 10 }, (_, i) => `${i}!`));
    expect(await prepared(b)).toEqual(expect.arrayContaining([expect.stringMatching(/^c\d+_same$/), expect.stringMatching(/^c\d+_same$/)]));
    expect((await prepared(b)).length).toBe(2);

    await a.end();
    await expect.poll(() => prepared(b)).toHaveLength(1);
    // A new connection names it again, as a fresh session would let it.
    const c = await connect();
    expect((await c.query({ name: 'same', text: 'select $1::int * 3 as n', values: [4] })).rows[0].n).toBe(12);
    expect(await prepared(c)).toHaveLength(2);
  });
});
