// Types of slots.js (plain JavaScript, loaded by the vectors' worker).
export class SlotTable {
  constructor(capacity?: number);
  readonly size: number;
  /** The slot of the id (-1: none held, or not a UUID). */
  get(id: string): number;
  /** The slot of the id at `words[at..at+4]` (chunkIdWords.js; -1: none held). */
  slotAt(words: Int32Array, at: number): number;
  set(id: string, slot: number): void;
  delete(id: string): void;
}
