// Chunk ids as words (chunkIdWords.js): written back, an id reads as PostgreSQL writes it, and ids
// compare by their words as their text forms sort, whatever the top bit of a word (words are
// signed) and in whichever word two ids first differ.
import { describe, expect, it } from 'vitest';
import { ID_WORDS, idAfter, idOfWords, packIds, writeIdWords } from '../../server/search/chunkIdWords.js';
import { prng } from '../support/prng.js';

const random = prng(11);
const hexDigits = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
const randomId = () => `${hexDigits(8)}-${hexDigits(4)}-${hexDigits(4)}-${hexDigits(4)}-${hexDigits(12)}`;

const EDGES = [
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '7fffffff-ffff-ffff-ffff-ffffffffffff',
  '80000000-0000-0000-0000-000000000000',
  '12345678-7fff-ffff-8000-000000000000',
  '12345678-8000-0000-7fff-ffffffffffff',
  '12345678-9abc-def0-1234-56787fffffff',
  '12345678-9abc-def0-1234-567880000000',
];

describe('chunk ids as words', () => {
  const ids = [...EDGES, ...Array.from({ length: 2000 }, randomId)];
  const words = packIds(ids);

  it('reads back each id as its text form', () => {
    ids.forEach((id, i) => {
      expect(idOfWords(words, i * ID_WORDS)).toBe(id);
    });
    // Upper-case digits are the same id, read back as PostgreSQL writes it.
    const upper = new Int32Array(ID_WORDS);
    expect(writeIdWords(EDGES[6].toUpperCase(), upper, 0)).toBe(true);
    expect(idOfWords(upper, 0)).toBe(EDGES[6]);
  });

  it('orders ids as their text forms sort', () => {
    for (let i = 0; i < ids.length; i++)
      for (const j of [0, 1, 2, 3, 4, 5, 6, 7, (i * 7919) % ids.length, i]) {
        expect(idAfter(words, i * ID_WORDS, j * ID_WORDS), `${ids[i]} after ${ids[j]}`).toBe(ids[i] > ids[j]);
      }
  });
});
