// Surface words: the lowercase runs of letters a text is made of, as the dataset vocabulary stores
// them and as typo correction reads query words. Digits, punctuation and symbols separate words.

/** Longer runs are codes, hashes or glued text rather than words: left out of the vocabulary. */
export const MAX_WORD_LENGTH = 40;

const WORD = /[\p{L}\p{M}]+/gu;

/** The text's distinct words, lowercase, sorted. */
export function surfaceWords(text: string): string[] {
  const words = new Set<string>();
  for (const [word] of text.toLowerCase().matchAll(WORD)) if (word.length <= MAX_WORD_LENGTH) words.add(word);
  return [...words].sort();
}

/** Whether a token is a word and nothing else (letters only). */
export function isWord(token: string): boolean {
  return /^[\p{L}\p{M}]+$/u.test(token) && token.length <= MAX_WORD_LENGTH;
}
