// Types of slots.js (plain JavaScript, loaded by the vectors' worker).
export const ID_LENGTH: number;

export class SlotTable {
  constructor(capacity?: number);
  readonly size: number;
  /** The slot of the id at `text[at..]` (-1: none held, or not a UUID). */
  get(text: string, at?: number): number;
  set(id: string, slot: number): void;
  delete(id: string): void;
}
