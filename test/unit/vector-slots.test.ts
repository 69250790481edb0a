// The held vectors' id-to-slot table: every look-up agrees with a Map through growth, deletions
// (whose backward shifts must keep every later probe reaching its entry) and packed look-ups.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ID_LENGTH, SlotTable } from '../../server/search/retrieval/vectors/slots.js';

/** Ids that share all but their last digits: a weak hash would pile them into one run of entries. */
const sequential = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);

describe('SlotTable', () => {
  for (const [kind, make] of [
    ['random', (n: number) => Array.from({ length: n }, () => randomUUID())],
    ['sequential', sequential],
  ] as const) {
    it(`agrees with a Map through growth, deletions and re-insertions (${kind} ids)`, () => {
      const ids = make(20_000);
      const table = new SlotTable(8);
      const expected = new Map<string, number>();
      ids.forEach((id, slot) => {
        table.set(id, slot);
        expected.set(id, slot);
      });
      // Every third removed, then half of those back under new slots.
      ids.forEach((id, i) => {
        if (i % 3 === 0) {
          table.delete(id);
          expected.delete(id);
        }
      });
      ids.forEach((id, i) => {
        if (i % 6 === 0) {
          table.set(id, 100_000 + i);
          expected.set(id, 100_000 + i);
        }
      });
      expect(table.size).toBe(expected.size);
      for (const id of ids) expect(table.get(id)).toBe(expected.get(id) ?? -1);
    });
  }

  it('reads ids packed one after another, in either case, and answers -1 for the rest', () => {
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const table = new SlotTable();
    for (const [slot, id] of ids.entries()) table.set(id, slot);
    const packed = [ids[7], ids[3].toUpperCase(), randomUUID(), 'zzzzzzzz-0000-4000-8000-000000000000'].join('');
    const found = [];
    for (let at = 0; at < packed.length; at += ID_LENGTH) found.push(table.get(packed, at));
    expect(found).toEqual([7, 3, -1, -1]);
  });

  it('refuses to hold what is not a UUID', () => {
    expect(() => new SlotTable().set('not-a-uuid', 1)).toThrow(/not a chunk id/);
  });
});
