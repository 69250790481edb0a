// The built-in embedder: deterministic, offline and fast. It hashes stemmed words, word pairs and
// character trigrams into a fixed number of signed buckets (feature hashing), so texts that share
// words or word forms point the same way. It knows no synonyms; an embedding endpoint does better.
import { stemmer } from 'stemmer';
import type { Embedder, EmbeddingPurpose } from './types.js';

const STOP_WORDS = new Set('a an and are as at be but by for from has have in into is it its of on or that the their this to was were will with'.split(' '));
const WORD = /[\p{L}\p{N}]+/gu;

export class BuiltinEmbedder implements Embedder {
  readonly model: string;

  constructor(readonly dimension: number) {
    if (!Number.isInteger(dimension) || dimension < 1) throw new RangeError(`dimension must be a positive integer, got ${dimension}`);
    this.model = `builtin-hash-${dimension}`;
  }

  async embed(texts: string[], _purpose?: EmbeddingPurpose): Promise<number[][]> {
    return texts.map((text) => this.vectorOf(text));
  }

  private vectorOf(text: string): number[] {
    const vector = new Float64Array(this.dimension);
    const words = (text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(WORD) ?? []).filter((w) => !STOP_WORDS.has(w));
    const stems = words.map((w) => stemmer(w));
    for (let i = 0; i < stems.length; i++) {
      this.add(vector, `w:${stems[i]}`, 1);
      if (i > 0) this.add(vector, `b:${stems[i - 1]} ${stems[i]}`, 0.5);
      const padded = `#${words[i]}#`;
      const grams = padded.length - 2;
      for (let j = 0; j < grams; j++) this.add(vector, `t:${padded.slice(j, j + 3)}`, 0.6 / Math.sqrt(grams));
    }
    if (stems.length === 0) this.add(vector, 'empty', 1);
    let norm = 0;
    for (const v of vector) norm += v * v;
    norm = Math.sqrt(norm);
    return Array.from(vector, (v) => v / norm);
  }

  private add(vector: Float64Array, feature: string, weight: number): void {
    const hash = fnv1a(feature);
    // The top bit picks the sign, so colliding features tend to cancel rather than pile up.
    vector[hash % this.dimension] += hash & 0x80000000 ? -weight : weight;
  }
}

/** 32-bit FNV-1a over UTF-16 code units: stable across runs and platforms. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
