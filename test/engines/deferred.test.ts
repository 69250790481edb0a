// Analytics rows written after the answer: a row the database refuses costs only itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../server/store/db.js';
import { DeferredWriter } from '../../server/store/deferred.js';
import { mode, testConfig } from '../support/env.js';

describe(`deferred rows (${mode})`, () => {
  let store: Store;
  const logged: { table: string; rows: number }[] = [];
  const logger = { error: (fields: { table: string; rows: number }) => void logged.push({ table: fields.table, rows: fields.rows }) };

  beforeAll(async () => {
    store = await openStore((await testConfig()).store);
    await store.db.raw('create table deferred_probe (dataset text not null, n integer not null check (n > 0))');
  });
  afterAll(async () => {
    await store?.close();
  });

  it('writes every good row of a batch that holds a refused one, and logs the refused row alone', async () => {
    const writer = new DeferredWriter(store.db, logger);
    for (const [dataset, n] of [
      ['a', 1],
      ['b', 2],
      ['a', -1],
      ['c', 3],
    ] as const)
      writer.insert('deferred_probe', { dataset, n });
    await writer.flush();
    const rows = await store.db('deferred_probe').orderBy('n').select('dataset', 'n');
    expect(rows).toEqual([
      { dataset: 'a', n: 1 },
      { dataset: 'b', n: 2 },
      { dataset: 'c', n: 3 },
    ]);
    expect(logged).toEqual([{ table: 'deferred_probe', rows: 1 }]);
  });
});
