// The held vectors' id-to-slot table: every look-up agrees with a Map through growth, deletions
// (whose backward shifts must keep every later probe reaching its entry) and look-ups by words.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ID_WORDS, packIds, writeIdWords } from '../../server/search/chunkIdWords.js';
import { SlotTable } from '../../server/search/retrieval/vectors/slots.js';

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

  it('looks up ids packed as words, in either case, and answers -1 for the rest', () => {
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const table = new SlotTable();
    for (const [slot, id] of ids.entries()) table.set(id, slot);
    const words = packIds([ids[7], ids[3].toUpperCase(), randomUUID(), ids[49]]);
    const found = [];
    for (let at = 0; at < words.length; at += ID_WORDS) found.push(table.slotAt(words, at));
    expect(found).toEqual([7, 3, -1, 49]);
    expect(table.get('zzzzzzzz-0000-4000-8000-000000000000')).toBe(-1);
  });

  it('refuses to hold what is not a UUID', () => {
    expect(() => new SlotTable().set('not-a-uuid', 1)).toThrow(/not a chunk id/);
    expect(() => packIds(['0000000000000000000000000000000000ab'])).toThrow(/not a chunk id/);
  });

  it('keeps every bit of an id in its words', () => {
    const words = new Int32Array(ID_WORDS);
    expect(writeIdWords('ffffffff-8000-0001-7fff-fffe00000001', words, 0)).toBe(true);
    expect(Array.from(words)).toEqual([-1, 0x80000001 | 0, 0x7ffffffe, 1]);
    expect(writeIdWords('ffffffff-8000-0001-7fff-fffe0000000g', words, 0)).toBe(false);
  });
});
