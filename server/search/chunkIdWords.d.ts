// Types of chunkIdWords.js (plain JavaScript, loaded by the vectors' worker too).
export const ID_WORDS: number;
export function writeIdWords(id: string, words: Int32Array, at: number): boolean;
export function packIds(ids: string[]): Int32Array;
/** The UUID whose words are at `words[at..at+4]`, in PostgreSQL's text form (lower case). */
export function idOfWords(words: Int32Array, at: number): string;
/** Whether the id at `words[a..a+4]` comes after the one at `words[b..b+4]` as their text forms sort. */
export function idAfter(words: Int32Array, a: number, b: number): boolean;
