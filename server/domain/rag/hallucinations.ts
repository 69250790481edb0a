// A check of an answer against what it was given: the numbers and the capitalized names it states
// that occur in none of the chunks nor in the conversation are likely made up. A name is a word of
// two or more letters starting with a capital that does not start a sentence (where every word is
// capitalized); numbers match by their digits, so "1,200" is "1200". The score is the share of the
// answer's numbers and names that are not found: 0 for an answer that states none.

export interface HallucinationCheck {
  score: number;
  detected: string[];
}

const NUMBER = /\d+(?:[.,]\d+)*/gu;
const WORD = /\p{L}[\p{L}\p{M}'’-]*/gu;

const digits = (n: string) => n.replace(/[.,](?=\d{3}\b)/g, '');

/** The numbers and names the answer states, in order, each once. */
function claims(answer: string): { numbers: string[]; names: string[] } {
  const numbers = [...new Set(answer.match(NUMBER) ?? [])];
  const names = new Set<string>();
  for (const sentence of answer.split(/(?<=[.!?:;])\s+|\n+/u)) {
    const words = sentence.match(WORD) ?? [];
    for (const word of words.slice(1)) if (word.length >= 2 && /^\p{Lu}/u.test(word)) names.add(word);
  }
  return { numbers, names: [...names] };
}

export function checkHallucinations(answer: string, sources: string[]): HallucinationCheck {
  const { numbers, names } = claims(answer);
  const total = numbers.length + names.length;
  if (total === 0) return { score: 0, detected: [] };
  const text = sources.join('\n');
  const knownNumbers = new Set((text.match(NUMBER) ?? []).map(digits));
  const knownWords = new Set((text.match(WORD) ?? []).map((w) => w.toLowerCase()));
  const detected = [...numbers.filter((n) => !knownNumbers.has(digits(n))), ...names.filter((w) => !knownWords.has(w.toLowerCase()))];
  return { score: detected.length / total, detected };
}
