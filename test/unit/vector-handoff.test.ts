// A keyword list's hand-off to a nearest search under way (vectors/handoff.js): the list delivered
// before the worker closes the hand-off is what the worker reads at its close; once closed, no list
// is taken; a list longer than the room made for it is refused. A helper's wait ends with either.
import { describe, expect, it } from 'vitest';
import { ID_WORDS, packIds } from '../../server/search/chunkIdWords.js';
import { awaitDelivery, close, deliver, handoff } from '../../server/search/retrieval/vectors/handoff.js';

const ids = ['0b9d4f2e-3c1a-4a8e-9f00-5d6c7b8a9e01', 'f1e2d3c4-b5a6-4978-8a6b-5c4d3e2f1a00'];

describe('a keyword list handed to a nearest search', () => {
  it('is read by the worker at its close when delivered before, and refused after', () => {
    const words = handoff(2);
    expect(deliver(words, packIds(ids))).toBe(true);
    expect(awaitDelivery(words, 0)).toBe(true);
    expect(Array.from(close(words)!)).toEqual(Array.from(packIds(ids)));
    // Read again, the same list; none other is taken.
    expect(Array.from(close(words)!)).toEqual(Array.from(packIds(ids)));
    expect(deliver(words, packIds(ids.slice(0, 1)))).toBe(false);
  });

  it('is not taken once the worker has closed the hand-off', () => {
    const words = handoff(2);
    expect(close(words)).toBeNull();
    expect(awaitDelivery(words, 0)).toBe(false);
    expect(deliver(words, packIds(ids))).toBe(false);
    expect(close(words)).toBeNull();
  });

  it('refuses a list longer than the room made for it, which then stays open', () => {
    const words = handoff(1);
    expect(deliver(words, packIds(ids))).toBe(false);
    expect(deliver(words, packIds(ids.slice(1)))).toBe(true);
    expect(close(words)!.length).toBe(ID_WORDS);
  });

  it('keeps a helper waiting no longer than it is told while the list is not made', () => {
    const words = handoff(1);
    const started = performance.now();
    expect(awaitDelivery(words, 20)).toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });
});
