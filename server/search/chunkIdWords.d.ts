// Types of chunkIdWords.js (plain JavaScript, loaded by the vectors' worker too).
export const ID_WORDS: number;
export function writeIdWords(id: string, words: Int32Array, at: number): boolean;
export function packIds(ids: string[]): Int32Array;
