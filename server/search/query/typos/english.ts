// Whether a word is an English word (any inflection): such words are never "corrected" into a word of
// the dataset, however close, and are not domain-specific. The list (about 274,000 words) is read
// once, when typo correction first needs it.
import { readFile } from 'node:fs/promises';
import wordListPath from 'word-list';

let words: Promise<Set<string>> | null = null;

function englishWords(): Promise<Set<string>> {
  words ??= readFile(wordListPath, 'utf8')
    .then((text) => new Set(text.split('\n')))
    .catch((error: unknown) => {
      words = null; // tried again by the next search
      throw error;
    });
  return words;
}

/** A test of lowercase words against the list, once it is loaded. */
export async function englishWordTest(): Promise<(word: string) => boolean> {
  const list = await englishWords();
  return (word) => list.has(word);
}
