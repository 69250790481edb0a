// Splitting a document's text into chunk texts the way the reference's file upload documents it:
// the text is cut after each delimiter (by default a run of `.`, `!`, `?` or newlines) into
// "splits", consecutive splits are grouped `target_splits_per_chunk` at a time (20 by default),
// and with `rebalance_chunks` (the default) the remainder is spread over the first groups, so 66
// splits with a target of 20 give 3 chunks of 22. Fewer splits than the target make one chunk.
// Chunks of 10,000 characters or more are then cut into equal parts below that size.
//
// Everything streams: the text arrives as segments (a 100 MB file is never one string), and the
// grouping needs only the number of splits, which a first pass over the text counts.

export interface SplitOptions {
  /** Delimiters after which the text is cut; empty strings are ignored; none given: `.`, `!`, `?` and newlines. */
  delimiters?: string[] | null;
  /** Splits per chunk; 20 unless set; at least 1. */
  targetSplitsPerChunk?: number | null;
  /** Spread the remainder over the first chunks; true unless set. */
  rebalance?: boolean | null;
}

/** A chunk at or above this length (UTF-16 code units, as the reference counts characters) is cut. */
export const MAX_CHUNK_CHARS = 10_000;
/**
 * Text without any delimiter is cut here anyway, so a file with no sentence ends (minified, binary
 * noise) never becomes one unbounded string; the chunks made from it are cut again below MAX_CHUNK_CHARS.
 */
export const MAX_SPLIT_CHARS = 100_000;

export const DEFAULT_TARGET_SPLITS = 20;

interface Splitter {
  /** Finds delimiters: a global regex. */
  pattern: RegExp;
  /** Whether a match touching the end of the buffer may still grow (runs of the default class). */
  greedy: boolean;
  /** The longest delimiter, for matches that may straddle two segments. */
  longest: number;
}

function splitterOf(delimiters: string[] | null | undefined): Splitter {
  const given = (delimiters ?? []).filter((d) => d.length > 0);
  if (given.length === 0) return { pattern: /[.!?\n]+/g, greedy: true, longest: 1 };
  // Longest first, so that of two delimiters starting at the same place the longer one wins.
  const sorted = [...new Set(given)].sort((a, b) => b.length - a.length);
  return {
    pattern: new RegExp(sorted.map(escapeRegExp).join('|'), 'g'),
    greedy: false,
    longest: sorted[0].length,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The splits of a text given in segments: each ends with its delimiter (the last one may have none). */
export async function* splits(segments: AsyncIterable<string> | Iterable<string>, delimiters?: string[] | null): AsyncGenerator<string> {
  const { pattern, greedy, longest } = splitterOf(delimiters);
  let buffer = '';
  for await (const segment of segments) {
    if (!segment) continue;
    buffer += segment;
    let start = 0;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(buffer); match; match = pattern.exec(buffer)) {
      const end = match.index + match[0].length;
      // Not yet certain: a run may continue, or a longer delimiter may start here, in the next segment.
      if (greedy ? end >= buffer.length : match.index + longest > buffer.length) break;
      yield buffer.slice(start, end);
      start = end;
      if (match[0].length === 0) pattern.lastIndex++;
    }
    buffer = buffer.slice(start);
    while (buffer.length > MAX_SPLIT_CHARS) {
      yield buffer.slice(0, MAX_SPLIT_CHARS);
      buffer = buffer.slice(MAX_SPLIT_CHARS);
    }
  }
  // The end of the text: whatever is left is the last split, delimiters and all.
  pattern.lastIndex = 0;
  let start = 0;
  for (let match = pattern.exec(buffer); match; match = pattern.exec(buffer)) {
    const end = match.index + match[0].length;
    yield buffer.slice(start, end);
    start = end;
  }
  if (start < buffer.length) yield buffer.slice(start);
}

/** How many splits the text has. */
export async function countSplits(segments: AsyncIterable<string> | Iterable<string>, delimiters?: string[] | null): Promise<number> {
  let count = 0;
  for await (const _ of splits(segments, delimiters)) count++;
  return count;
}

/**
 * The sizes of the groups of splits, first to last, for `count` splits: an iterator, since a
 * large file has many thousands of groups.
 */
export function* groupSizes(count: number, target: number, rebalance: boolean): Generator<number> {
  if (!Number.isInteger(target) || target < 1) throw new Error(`target splits per chunk must be a positive integer, got ${target}`);
  if (count < target) {
    yield count;
    return;
  }
  let left = count;
  if (rebalance) {
    let remainder = count % target;
    const perGroup = Math.ceil(remainder / Math.floor(count / target));
    while (remainder > 0) {
      const size = Math.min(target + Math.min(remainder, perGroup), left);
      yield size;
      left -= size;
      remainder -= perGroup;
    }
  }
  while (left > 0) {
    const size = Math.min(target, left);
    yield size;
    left -= size;
  }
}

/** Cuts a text of MAX_CHUNK_CHARS or more into equal parts below it, never inside a surrogate pair. */
export function cutLarge(text: string): string[] {
  if (text.length < MAX_CHUNK_CHARS) return [text];
  const parts = Math.ceil(text.length / MAX_CHUNK_CHARS);
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + size, text.length);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * The chunk texts of a document. `text()` gives the document's segments and is called once
 * (rebalancing off) or twice (on: once to count the splits). Chunks with nothing but whitespace are dropped.
 */
export async function* chunkTexts(text: () => AsyncIterable<string> | Iterable<string>, options: SplitOptions = {}): AsyncGenerator<string> {
  const target = options.targetSplitsPerChunk ?? DEFAULT_TARGET_SPLITS;
  const rebalance = options.rebalance ?? true;
  // Without rebalancing the sizes do not depend on the count, except that fewer splits than the
  // target make one chunk, which plain grouping by the target gives as well.
  const sizes = rebalance ? groupSizes(await countSplits(text(), options.delimiters), target, true) : groupSizes(Infinity, target, false);
  let group: string[] = [];
  let size = nextSize(sizes);
  const flush = function* () {
    const joined = group.join('');
    group = [];
    size = nextSize(sizes);
    for (const part of cutLarge(joined)) if (part.trim()) yield part;
  };
  for await (const split of splits(text(), options.delimiters)) {
    group.push(split);
    if (group.length >= size) yield* flush();
  }
  if (group.length) yield* flush();
}

function nextSize(sizes: Generator<number>): number {
  const next = sizes.next();
  return next.done ? Infinity : next.value;
}
