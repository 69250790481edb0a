// A dataset's BM25 postings held in memory, so a search scores its matches in a tight loop over
// typed arrays instead of in SQL: the postings index of migration 014 bounds what SQL must read,
// but at 100,000 chunks and more a common query word still leaves thousands of chunks to score.
//
// The database stays the truth: the index is built and kept current as mirrors.ts describes. A
// changed chunk's old postings are marked dead and its new ones appended under a new ordinal, which
// keeps every posting list in ordinal order. Until an index is ready, searches go to SQL
// (index.ts), which gives the same results.
//
// A page of results (`top`) reads a posting list only where a chunk could still reach the page
// (topK.ts). Counting every match (`match`) scores every posting.
//
// The index holds each chunk's tags as well, an ordinal list per tag, so that a filter on tags is
// answered without SQL (filters/held.ts).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Bm25Parameters } from './bounds.js';
import { ID_WORDS, idOfWords, writeIdWords } from '../../chunkIdWords.js';
import type { TagIndex } from '../../filters/held.js';
import { type Mirror, Mirrors } from '../mirrors.js';
import { SlotTable } from '../vectors/slots.js';
import { type TypedArray, type TypedArrayKind, grown, sharedArray } from '../../sharedArrays.js';
import { PostingList } from './postingList.js';
import { BestK, type Ranked } from './topK.js';
import { walkTop } from './walkHelpers.js';
import { type ChunkTerms, chunkTerms, chunkTermsPage } from './postings.js';

/** Chunks read per page while building. */
const BUILD_PAGE = 5000;
/** Postings held in memory across datasets; the least recently searched go first. */
const POSTINGS_BUDGET = 200_000_000;
/** A posting's bytes: ordinal, frequency and length class. What lists keep beside them counts in these. */
const POSTING_BYTES = 7;

/** The chunks holding a query term, with their scores (parallel arrays). */
export interface Matches {
  ordinals: Int32Array;
  scores: Float64Array;
}

export class DatasetIndex implements Mirror, TagIndex {
  /** The dataset version this index reflects (every change up to it is applied). */
  version = 0;
  postings = 0;
  /** Bytes the lists keep beside their postings (postingList.ts). */
  private extraBytes = 0;
  /** Ordinals given so far, dead ones included. */
  private slots = 0;
  /**
   * Each ordinal's id as words (chunkIdWords.js): no string a chunk, which at a million chunks
   * was a million objects more for every garbage collection to mark. Ties are broken on them, and
   * a filter's chunks go to the vectors' worker as them.
   */
  private idWords = sharedArray(Int32Array, 1024 * ID_WORDS);
  private lengths = sharedArray(Int32Array, 1024);
  private dead = sharedArray(Uint8Array, 1024);
  private deadCount = 0;
  /** The live chunks' lengths, summed. */
  lengthSum = 0;
  /** The live chunks' ordinals by id. */
  private readonly ordinalOf = new SlotTable();
  private readonly lists = new Map<string, PostingList>();
  private readonly tagLists = new Map<string, OrdinalList>();
  /** holding()'s counts once dead chunks are skipped, with the list size and dead count they were made at. */
  private readonly liveCounts = new Map<string, { size: number; deadCount: number; live: number }>();
  // Scratch for scoring, reused: a search scores synchronously, so no two use it at once.
  private scratchScores = new Float64Array(0);
  private scratchSeen = new Uint32Array(0);
  private scratchOrdinals = new Int32Array(0);
  private epoch = 0;

  get chunks(): number {
    return this.slots - this.deadCount;
  }

  /** Its size for the budget: postings, and what the lists keep beside them in postings' worth of bytes. */
  get size(): number {
    return this.postings + Math.ceil(this.extraBytes / POSTING_BYTES);
  }

  /** Nothing outside the heap to free. */
  release(): void {}

  get deadShare(): number {
    return this.slots === 0 ? 0 : this.deadCount / this.slots;
  }

  idOf(ordinal: number): string {
    return idOfWords(this.idWords, ordinal * ID_WORDS);
  }

  ordinalOfId(id: string): number | undefined {
    const ordinal = this.ordinalOf.get(id);
    return ordinal < 0 ? undefined : ordinal;
  }

  idWordsOf(ordinals: Int32Array, n: number): Int32Array {
    const words = new Int32Array(n * ID_WORDS);
    const all = this.idWords;
    // Word by word: a subarray a chunk cost more than the copy (at 10,000 chunks, 2.5 ms against 0.5).
    for (let i = 0, to = 0; i < n; i++, to += ID_WORDS) {
      const from = ordinals[i] * ID_WORDS;
      words[to] = all[from];
      words[to + 1] = all[from + 1];
      words[to + 2] = all[from + 2];
      words[to + 3] = all[from + 3];
    }
    return words;
  }

  isDead(ordinal: number): boolean {
    return this.dead[ordinal] === 1;
  }

  /** The ordinals of the chunks holding `tag`, ascending, dead ones too. */
  tagged(tag: string): Int32Array {
    const list = this.tagLists.get(tag);
    return list ? list.ordinals.subarray(0, list.size) : new Int32Array(0);
  }

  /** The ordinals of the chunks the index holds among `ids`, ascending (for matchAmong). */
  ordinalsOf(ids: string[]): Int32Array {
    return Int32Array.from(ids.flatMap((id) => this.ordinalOfId(id) ?? [])).sort();
  }

  /** Grows with every chunk added or removed. */
  get changes(): number {
    return this.slots + this.deadCount;
  }

  /** Slots for ordinals (dead ones included): the size a mask over them needs. */
  get capacity(): number {
    return this.slots;
  }

  /** Adds the chunk, replacing what the index held for it. */
  add(chunk: ChunkTerms): void {
    this.remove(chunk.id);
    const ordinal = this.slots;
    if (ordinal === this.lengths.length) {
      this.lengths = grown(this.lengths, ordinal * 2);
      this.dead = grown(this.dead, ordinal * 2);
      this.idWords = grown(this.idWords, ordinal * 2 * ID_WORDS);
    }
    if (!writeIdWords(chunk.id, this.idWords, ordinal * ID_WORDS)) throw new Error(`not a chunk id: ${chunk.id}`);
    this.slots++;
    this.lengths[ordinal] = chunk.length;
    this.lengthSum += chunk.length;
    this.ordinalOf.set(chunk.id, ordinal);
    for (let i = 0; i < chunk.terms.length; i++) {
      let list = this.lists.get(chunk.terms[i]);
      if (!list) {
        list = new PostingList();
        this.lists.set(chunk.terms[i], list);
      }
      this.extraBytes += list.append(ordinal, Math.min(chunk.tfs[i], 65_535), this.lengths);
    }
    this.postings += chunk.terms.length;
    for (const tag of new Set(chunk.tags)) {
      let list = this.tagLists.get(tag);
      if (!list) {
        list = { ordinals: new Int32Array(2), size: 0 };
        this.tagLists.set(tag, list);
      }
      if (list.size === list.ordinals.length) list.ordinals = grown(list.ordinals, list.size * 2);
      list.ordinals[list.size++] = ordinal;
    }
  }

  remove(id: string): void {
    const ordinal = this.ordinalOf.get(id);
    if (ordinal < 0) return;
    this.dead[ordinal] = 1;
    this.deadCount++;
    this.lengthSum -= this.lengths[ordinal];
    this.ordinalOf.delete(id);
  }

  /** How many live chunks hold the term: its count in the database at this index's version. */
  holding(term: string): number {
    const list = this.lists.get(term);
    if (!list) return 0;
    if (this.deadCount === 0) return list.size;
    const known = this.liveCounts.get(term);
    if (known && known.size === list.size && known.deadCount === this.deadCount) return known.live;
    let live = 0;
    for (let j = 0; j < list.size; j++) if (this.dead[list.ordinals[j]] === 0) live++;
    this.liveCounts.set(term, { size: list.size, deadCount: this.deadCount, live });
    return live;
  }

  /**
   * Every live chunk holding one of the terms, with its score: Σ weight · tf·(k1+1) / (tf +
   * k1·(1 − b + b·len/avg)), computed as the SQL path computes it.
   */
  match(terms: string[], weights: number[], { k1, b, averageLength }: Bm25Parameters): Matches {
    const slots = this.slots;
    if (this.scratchScores.length < slots) {
      this.scratchScores = new Float64Array(this.lengths.length);
      this.scratchSeen = new Uint32Array(this.lengths.length);
      this.scratchOrdinals = new Int32Array(this.lengths.length);
      this.epoch = 0;
    }
    if (this.epoch === 0xffffffff) {
      this.scratchSeen.fill(0);
      this.epoch = 0;
    }
    const epoch = ++this.epoch;
    const { scratchScores: scores, scratchSeen: seen, scratchOrdinals: touched, dead, lengths } = this;
    let count = 0;
    for (let t = 0; t < terms.length; t++) {
      const list = this.lists.get(terms[t]);
      if (!list) continue;
      const weight = weights[t];
      const { ordinals, tfs, size } = list;
      for (let j = 0; j < size; j++) {
        const d = ordinals[j];
        if (dead[d] === 1) continue;
        const tf = tfs[j];
        const part = (weight * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[d]) / averageLength));
        if (seen[d] === epoch) scores[d] += part;
        else {
          seen[d] = epoch;
          scores[d] = part;
          touched[count++] = d;
        }
      }
    }
    const matched = touched.slice(0, count);
    const matchedScores = new Float64Array(count);
    for (let i = 0; i < count; i++) matchedScores[i] = scores[matched[i]];
    return { ordinals: matched, scores: matchedScores };
  }

  /** Writes the index into `dir` (typed arrays in this machine's byte order), for `readFrom`. */
  async saveTo(dir: string): Promise<void> {
    const slots = this.slots;
    const lists = [...this.lists];
    const ordinals = new Int32Array(this.postings);
    const tfs = new Uint16Array(this.postings);
    let at = 0;
    for (const [, list] of lists) {
      ordinals.set(list.ordinals.subarray(0, list.size), at);
      tfs.set(list.tfs.subarray(0, list.size), at);
      at += list.size;
    }
    const tagLists = [...this.tagLists];
    const tagged = new Int32Array(tagLists.reduce((n, [, list]) => n + list.size, 0));
    at = 0;
    for (const [, list] of tagLists) {
      tagged.set(list.ordinals.subarray(0, list.size), at);
      at += list.size;
    }
    const layout: KeptLayout = {
      format: KEPT_FORMAT,
      ids: Array.from({ length: slots }, (_, ordinal) => this.idOf(ordinal)),
      terms: lists.map(([term, list]) => [term, list.size]),
      tags: tagLists.map(([tag, list]) => [tag, list.size]),
    };
    await writeFile(path.join(dir, 'layout.json'), JSON.stringify(layout));
    await writeFile(path.join(dir, 'lengths.i32'), bytesOf(this.lengths.subarray(0, slots)));
    await writeFile(path.join(dir, 'dead.u8'), bytesOf(this.dead.subarray(0, slots)));
    await writeFile(path.join(dir, 'ordinals.i32'), bytesOf(ordinals));
    await writeFile(path.join(dir, 'tfs.u16'), bytesOf(tfs));
    await writeFile(path.join(dir, 'tagged.i32'), bytesOf(tagged));
  }

  /** The index `saveTo` wrote into `dir`. */
  static async readFrom(dir: string): Promise<DatasetIndex> {
    const layout: KeptLayout = JSON.parse(await readFile(path.join(dir, 'layout.json'), 'utf8'));
    if (layout.format !== KEPT_FORMAT) throw new Error(`${dir} holds format ${layout.format}, not ${KEPT_FORMAT}`);
    const slots = layout.ids.length;
    const postings = layout.terms.reduce((sum, [, size]) => sum + size, 0);
    const read = async <T extends TypedArray>(file: string, Kind: TypedArrayKind<T>, length: number, capacity = length): Promise<T> => {
      const bytes = await readFile(path.join(dir, file));
      if (bytes.length !== length * Kind.BYTES_PER_ELEMENT) throw new Error(`${file} does not hold ${length} values`);
      const array = sharedArray(Kind, Math.max(capacity, 2));
      new Uint8Array(array.buffer).set(bytes);
      return array;
    };
    const index = new DatasetIndex();
    index.slots = slots;
    index.lengths = await read('lengths.i32', Int32Array, slots, slots * 2);
    index.dead = await read('dead.u8', Uint8Array, slots, slots * 2);
    index.idWords = sharedArray(Int32Array, Math.max(slots * 2, 2) * ID_WORDS);
    for (let ordinal = 0; ordinal < slots; ordinal++)
      if (!writeIdWords(layout.ids[ordinal], index.idWords, ordinal * ID_WORDS)) throw new Error(`${dir} holds an id that is not a UUID`);
    const ordinals = await read('ordinals.i32', Int32Array, postings);
    const tfs = await read('tfs.u16', Uint16Array, postings);
    for (let ordinal = 0; ordinal < slots; ordinal++) {
      if (index.dead[ordinal] === 1) index.deadCount++;
      else {
        index.ordinalOf.set(layout.ids[ordinal], ordinal);
        index.lengthSum += index.lengths[ordinal];
      }
    }
    let at = 0;
    for (const [term, size] of layout.terms) {
      const list = PostingList.over(ordinals.subarray(at, at + size), tfs.subarray(at, at + size), index.lengths);
      index.lists.set(term, list);
      index.extraBytes += list.extraBytes;
      at += size;
    }
    index.postings = postings;
    const tagged = await read(
      'tagged.i32',
      Int32Array,
      layout.tags.reduce((sum, [, size]) => sum + size, 0),
    );
    at = 0;
    for (const [tag, size] of layout.tags) {
      index.tagLists.set(tag, { ordinals: tagged.subarray(at, at + size), size });
      at += size;
    }
    return index;
  }

  /** The best `k` matches scoring at least `least`, best first, ties by chunk id. */
  best(matches: Matches, k: number, least: number): Ranked[] {
    const best = new BestK(k, this.idWords);
    const { scores, ordinals } = matches;
    for (let i = 0; i < scores.length; i++) if (scores[i] >= least) best.offer(ordinals[i], scores[i]);
    return best.ranked();
  }

  /**
   * The chunks among `ordinals` (ascending) that are live and hold one of the terms, with their
   * scores: what match() gives for them, to the last bit. A filter passing few chunks is scored
   * this way, each of its chunks looked up in every list, rather than by walking the lists whole.
   */
  matchAmong(ordinals: Int32Array, terms: string[], weights: number[], { k1, b, averageLength }: Bm25Parameters): Matches {
    const held = terms.flatMap((term, t) => {
      const list = this.lists.get(term);
      return list && list.size > 0 ? [{ list, weight: weights[t], at: 0 }] : [];
    });
    const matched = new Int32Array(ordinals.length);
    const scores = new Float64Array(ordinals.length);
    let count = 0;
    for (const d of ordinals) {
      if (this.dead[d] === 1) continue;
      const norm = k1 * (1 - b + (b * this.lengths[d]) / averageLength);
      let score = 0;
      let holds = false;
      // In the query's order, as match() adds them up.
      for (const cursor of held) {
        const tf = cursor.list.frequencyIn(d, cursor);
        if (tf > 0) {
          score += (cursor.weight * tf * (k1 + 1)) / (tf + norm);
          holds = true;
        }
      }
      if (holds) {
        matched[count] = d;
        scores[count++] = score;
      }
    }
    return { ordinals: matched.slice(0, count), scores: scores.slice(0, count) };
  }

  /**
   * The best `k` live chunks holding a term that score at least `least`, best first, ties by chunk
   * id: exactly what best(match(…)) gives, with the same scores, from few postings (topK.ts).
   * `skipped` (1 for each ordinal left out, dead ones included) narrows the walk to a filter's chunks.
   */
  top(
    terms: string[],
    weights: number[],
    parameters: Bm25Parameters,
    k: number,
    least: number,
    { split = false, skipped = this.dead }: TopOptions = {},
  ): Ranked[] {
    // A negative weight would break the bounds: then every posting is scored.
    if (weights.some((w) => !(w >= 0))) {
      const matches = this.match(terms, weights, parameters);
      return this.best(skipped === this.dead ? matches : kept(matches, skipped), k, least);
    }
    const lists = terms.map((term) => this.lists.get(term) ?? null);
    return walkTop({ lists, weights, chunks: { idWords: this.idWords, skipped, lengths: this.lengths }, parameters, k, least }, split);
  }
}

export interface TopOptions {
  /** Whether a long walk may be shared with a helper thread (walkHelpers.ts). */
  split?: boolean;
  /** 1 for each ordinal left out, dead ones included: a filter's chunks. */
  skipped?: Uint8Array;
}

/** The matches whose ordinals `skipped` does not mark. */
function kept(matches: Matches, skipped: Uint8Array): Matches {
  const taken = (_: number, i: number) => skipped[matches.ordinals[i]] === 0;
  return { ordinals: matches.ordinals.filter(taken), scores: matches.scores.filter(taken) };
}

/** A tag's ordinals, ascending, in the first `size` slots. */
interface OrdinalList {
  ordinals: Int32Array;
  size: number;
}

/** What `saveTo` writes beside the arrays: the chunk ids by ordinal, and each term's and tag's list size. */
interface KeptLayout {
  format: number;
  ids: string[];
  terms: [term: string, size: number][];
  tags: [tag: string, size: number][];
}
/** The layout's version: files of another are not read (format 1 held no tags). */
const KEPT_FORMAT = 2;

const bytesOf = (array: TypedArray) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** The datasets' BM25 postings held in memory, kept current from the change log (mirrors.ts). */
export type Bm25Indexes = Mirrors<DatasetIndex>;

/** `keptDir`: see Mirrors; kept postings spare the next start reading every chunk's terms (about 80 s at a million). */
export function bm25Indexes(db: Knex, logger: Logger, keptDir: string | null = null): Bm25Indexes {
  return new Mirrors<DatasetIndex>(
    db,
    logger,
    {
      what: 'BM25 postings',
      budget: POSTINGS_BUDGET,
      async load(datasetId, more) {
        const index = new DatasetIndex();
        for (let after: string | null = null; ; ) {
          const page = await chunkTermsPage(db, datasetId, after, BUILD_PAGE);
          for (const chunk of page) index.add(chunk);
          if (page.length < BUILD_PAGE || !more(index)) return index;
          after = page[page.length - 1].id;
        }
      },
      async apply(index, datasetId, changed) {
        const now = await chunkTerms(db, datasetId, changed);
        for (const id of changed) index.remove(id);
        for (const chunk of now) index.add(chunk);
      },
      keep: (index, dir) => index.saveTo(dir),
      restore: (_datasetId, dir) => DatasetIndex.readFrom(dir),
    },
    keptDir,
  );
}
