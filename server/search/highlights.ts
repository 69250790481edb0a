// Highlighting of search results: marks where the query matches in a chunk's HTML and picks the
// passages that match best, as the reference API's `highlight_options` describe.
//
// The HTML is read once, by the walk that indexing reads it with (text/html.ts), into its text,
// with a map from every text offset back to the source, so marks are inserted into the original
// string in text nodes only: tags, attributes, comments, scripts and entities are never touched,
// and everything unmarked stays byte for byte.
// Pure and synchronous; O(text length × query words).
import { stem } from 'porter2';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { type HtmlTextSink, htmlTextParser } from '../text/html.js';

export interface Highlighted {
  chunk_html: string;
  highlights: string[];
}

/** The values used for options that are missing or null. */
export const HIGHLIGHT_DEFAULTS = Object.freeze({
  highlight_results: true,
  highlight_strategy: 'exactmatch' as T.HighlightStrategy,
  highlight_delimiters: Object.freeze(['?', ',', '.', '!', '\n']) as readonly string[],
  highlight_threshold: 0.8,
  highlight_window: 0,
  highlight_max_length: 8,
  highlight_max_num: 3,
  pre_tag: '<mark><b>',
  post_tag: '</b></mark>',
});

/** Marks the query's matches in the chunk's HTML and returns the best matching passages. */
export function highlight(chunkHtml: string, query: string, options?: T.HighlightOptions | null): Highlighted {
  const html = typeof chunkHtml === 'string' ? chunkHtml : '';
  try {
    return highlightUnsafe(html, typeof query === 'string' ? query : '', resolveOptions(options));
  } catch {
    // Odd input must never fail a search: the chunk is then returned as it is.
    return { chunk_html: html, highlights: [] };
  }
}

// ---------------------------------------------------------------------------------------------
// Options

interface Resolved {
  enabled: boolean;
  v1: boolean;
  delimiters: readonly string[];
  threshold: number;
  window: number;
  maxLength: number;
  maxNum: number;
  preTag: string;
  postTag: string;
}

// Helpers of hot functions live at the top level: a closure made per call is also named per call
// (the TypeScript loader keeps function names), which costs more than the closure's own work.
const intOption = (v: unknown, fallback: number, min: number) => (typeof v === 'number' && Number.isFinite(v) ? Math.max(min, Math.floor(v)) : fallback);

function resolveOptions(o: T.HighlightOptions | null | undefined): Resolved {
  const d = HIGHLIGHT_DEFAULTS;
  return {
    enabled: typeof o?.highlight_results === 'boolean' ? o.highlight_results : d.highlight_results,
    v1: o?.highlight_strategy === 'v1',
    delimiters: Array.isArray(o?.highlight_delimiters)
      ? o.highlight_delimiters.filter((x): x is string => typeof x === 'string' && x.length > 0)
      : d.highlight_delimiters,
    threshold: typeof o?.highlight_threshold === 'number' && Number.isFinite(o.highlight_threshold) ? o.highlight_threshold : d.highlight_threshold,
    window: intOption(o?.highlight_window, d.highlight_window, 0),
    // A span is at least one word long: 0 would otherwise mean "mark nothing".
    maxLength: intOption(o?.highlight_max_length, d.highlight_max_length, 1),
    maxNum: intOption(o?.highlight_max_num, d.highlight_max_num, 0),
    preTag: typeof o?.pre_tag === 'string' ? o.pre_tag : d.pre_tag,
    postTag: typeof o?.post_tag === 'string' ? o.post_tag : d.post_tag,
  };
}

// ---------------------------------------------------------------------------------------------
// Words

// Scripts written without spaces between words: every character is a word of its own, and a run
// of them in the query must appear as it is (substring matching).
const CJK = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}`;
const WORD_RE = new RegExp(String.raw`[${CJK}]|(?:(?![${CJK}])[\p{L}\p{N}\p{M}])+`, 'gu');
// The same words in text without those scripts, found without a look-ahead at every character.
const HAS_CJK = new RegExp(`[${CJK}]`, 'u');
const PLAIN_WORD_RE = /[\p{L}\p{N}\p{M}]+/gu;
const NOT_ASCII = /[^\x00-\x7f]/;
// A query's words and the marks standing for its quoted phrases (see parseQuery).
const QUERY_TOKEN_RE = new RegExp(`${WORD_RE.source}|\u0000`, 'gu');
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const SPACE = /\s/u;
// Characters that join query words into one term that must match as a phrase: e-mail, 3.5, U.S., AT&T.
const JOINERS = /^[-._@:&\u2010\u2011]?$/u;

// Common English words that carry no meaning on their own, plus the tails of contractions
// (what's, don't, we'll), which the tokenizer separates at the apostrophe.
const STOP_WORDS = new Set(
  (
    'a about am an and are as at be been being but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so such than that the their them then there these they this those to was we were what when where ' +
    'which who whom why will with would you your s t d ll re ve m'
  ).split(' '),
);

const keyOf = (word: string) => word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

interface Token {
  start: number;
  end: number;
  key: string;
  stem: string;
}

/** The words of text[from, to), at their offsets in `text`. */
function tokenize(text: string, withStems: boolean, from = 0, to = text.length): Token[] {
  const tokens: Token[] = [];
  const part = from === 0 && to === text.length ? text : text.slice(from, to);
  if (!NOT_ASCII.test(part)) {
    // ASCII alone (most text): its word characters are letters and digits, found without a regular expression.
    let start = -1;
    for (let i = from; i <= to; i++) {
      const c = i < to ? text.charCodeAt(i) : 0;
      const lower = c | 0x20;
      const word = (lower >= 0x61 && lower <= 0x7a && c >= 0x41) || (c >= 0x30 && c <= 0x39);
      if (word && start < 0) start = i;
      else if (!word && start >= 0) {
        tokens.push(tokenAt(text, start, i, withStems));
        start = -1;
      }
    }
    return tokens;
  }
  for (const m of part.matchAll(HAS_CJK.test(part) ? WORD_RE : PLAIN_WORD_RE))
    tokens.push(tokenAt(text, from + m.index, from + m.index + m[0].length, withStems));
  return tokens;
}

function tokenAt(text: string, start: number, end: number, withStems: boolean): Token {
  const { key, stem } = formsOf(text.slice(start, end));
  return { start, end, key, stem: withStems ? stem : key };
}

/**
 * Each word's key and stem, by the word as written: text repeats its words, and folding and
 * stemming every token was most of a highlight's time.
 */
const forms = new Map<string, { key: string; stem: string }>();
const MAX_FORMS = 50_000;

/**
 * A word's key and its stem as the search index stems it: Snowball English (porter2), the stemmer
 * of PostgreSQL's `english` configuration, so a word that matched is the word highlighted.
 */
function formsOf(word: string): { key: string; stem: string } {
  let found = forms.get(word);
  if (found === undefined) {
    const key = keyOf(word);
    let stemmed: string;
    try {
      stemmed = stem(key);
    } catch {
      stemmed = key;
    }
    found = { key, stem: stemmed };
    if (forms.size >= MAX_FORMS) forms.clear();
    forms.set(word, found);
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// The query

interface QueryWord {
  key: string;
  stem: string;
  /** A stop word: never marked alone, nor at either end of a multi-word span. */
  stop: boolean;
}

interface Query {
  /** The unquoted words in order; null separates runs that are not adjacent in the query. */
  sequence: (QueryWord | null)[];
  /** Quoted phrases and joined terms, as keys, each matched exactly and as a whole. */
  phrases: string[][];
  /** The units the threshold counts: distinct meaningful words, then distinct phrases. */
  unitCount: number;
  unitByKey: Map<string, number>;
  unitsByStem: Map<string, number[]>;
  unitOfPhrase: number[];
  /** Indexes into `phrases` by their first word. */
  phrasesByFirst: Map<string, number[]>;
  /** The keys and stems a mark can start at (meaningful words, phrases' first words): a passage holding none has no match. */
  startKeys: Set<string>;
  startStems: Set<string>;
  /**
   * Strings every word a mark can start at contains once lower-cased, when it is ASCII: its key
   * itself, or its stem but for the last two letters (Snowball English changes only a word's
   * ending, and adds at most one letter of its own, two in dying, lying and tying). ASCII text
   * whose passage holds none has no match in that passage.
   */
  anchors: string[];
}

/** The last query parsed: a search highlights every chunk of its page for the same query. */
let lastQuery: { raw: string; query: Query } | null = null;

function parsed(raw: string): Query {
  if (lastQuery?.raw !== raw) lastQuery = { raw, query: parseQuery(raw) };
  return lastQuery.query;
}

function parseQuery(raw: string): Query {
  // Quoted phrases first ("…" or “…”); a quote left open is ignored.
  const quoted: string[] = [];
  const rest = raw.replace(/(-?)["“”]([^"“”]*)["“”]/gu, (_all, dash: string, inner: string, at: number) => {
    // `-"…"` (at the start or after a space) excludes the phrase, as in the search syntax.
    const negated = dash === '-' && (at === 0 || SPACE.test(raw[at - 1]));
    if (!negated) quoted.push(inner);
    return `${negated ? '' : dash} \u0000 `;
  });

  const words: { key: string; stem: string }[][] = []; // groups of joined words
  const barrierAfter: boolean[] = [];
  const tokens = [...rest.matchAll(QUERY_TOKEN_RE)];
  let prevEnd = -1;
  let negatedGroup = false;
  for (const m of tokens) {
    if (m[0] === '\u0000') {
      if (words.length) barrierAfter[words.length - 1] = true;
      prevEnd = -1;
      continue;
    }
    const gap = prevEnd >= 0 ? rest.slice(prevEnd, m.index) : null;
    const word = formsOf(m[0]);
    if (gap !== null && JOINERS.test(gap)) {
      if (!negatedGroup) words[words.length - 1].push(word);
    } else {
      // `-word` (at the start or after a space) excludes the word, as in the search syntax.
      negatedGroup = rest[m.index - 1] === '-' && (m.index === 1 || SPACE.test(rest[m.index - 2]));
      if (negatedGroup) {
        if (words.length) barrierAfter[words.length - 1] = true;
      } else words.push([word]);
    }
    prevEnd = m.index + m[0].length;
  }

  const phrases: string[][] = [];
  for (const text of quoted) {
    const keys = tokenize(text, false).map((t) => t.key);
    if (keys.length) phrases.push(keys);
  }
  const singles: { key: string; stem: string }[] = [];
  const sequence: (QueryWord | null)[] = [];
  // Stop words count only in a query made of nothing else ("to be").
  const anyMeaningful = phrases.length > 0 || words.some((g) => g.length > 1 || !STOP_WORDS.has(g[0].key));
  words.forEach((group, i) => {
    if (group.length > 1) {
      // Joined words (e-mail, AT&T, 退款) are a phrase, even when made of stop words.
      phrases.push(group.map((w) => w.key));
      sequence.push(null);
    } else {
      const stop = STOP_WORDS.has(group[0].key) && anyMeaningful;
      sequence.push({ ...group[0], stop });
      if (!stop) singles.push(group[0]);
    }
    if (barrierAfter[i]) sequence.push(null);
  });

  const unitByKey = new Map<string, number>();
  const unitsByStem = new Map<string, number[]>();
  let unitCount = 0;
  for (const w of singles) {
    if (unitByKey.has(w.key)) continue;
    unitByKey.set(w.key, unitCount);
    unitsByStem.set(w.stem, [...(unitsByStem.get(w.stem) ?? []), unitCount]);
    unitCount++;
  }
  const phraseUnits = new Map<string, number>();
  const unitOfPhrase = phrases.map((p) => {
    const id = p.join(' ');
    let unit = phraseUnits.get(id);
    if (unit === undefined) phraseUnits.set(id, (unit = unitCount++));
    return unit;
  });
  const phrasesByFirst = new Map<string, number[]>();
  for (const [i, p] of phrases.entries()) phrasesByFirst.set(p[0], [...(phrasesByFirst.get(p[0]) ?? []), i]);
  const meaningful = sequence.filter((w): w is QueryWord => w !== null && !w.stop);
  const startKeys = new Set([...meaningful.map((w) => w.key), ...phrasesByFirst.keys()]);
  const startStems = new Set(meaningful.map((w) => w.stem));
  // A word of combining marks alone has an empty key: it matches no ASCII word, and is no anchor.
  const anchors = [...new Set([...startKeys, ...[...startStems].map((stem) => stem.slice(0, Math.max(1, stem.length - 2)))])].filter(Boolean);
  return { sequence, phrases, unitCount, unitByKey, unitsByStem, unitOfPhrase, phrasesByFirst, startKeys, startStems, anchors };
}

// ---------------------------------------------------------------------------------------------
// HTML → text, with a map back to the source

enum Kind {
  /** Copied from the source one to one. */
  Literal,
  /** A decoded character reference: marked whole or not at all. */
  Entity,
  /** Text with no source to mark: a line break standing for a block boundary, a title's words, text not located. */
  Virtual,
}

interface Piece {
  text: number;
  length: number;
  raw: number;
  rawLength: number;
  kind: Kind;
}

/** The chunk's text as the highlighter reads it (the walk indexing reads), with its map back to the source. */
export function extractText(html: string): { text: string; pieces: Piece[] } {
  const sink = new SourcedText(html);
  htmlTextParser(sink).end(html);
  return { text: sink.parts.join(''), pieces: sink.pieces };
}

/** The walk's text laid end to end, each piece of it mapped back to where it came from. */
class SourcedText implements HtmlTextSink {
  readonly parts: string[] = [];
  readonly pieces: Piece[] = [];
  private length = 0;
  /** Where the last piece taken from the source ends. */
  private rawEnd = 0;
  private inTitle = false;

  constructor(private readonly html: string) {}

  block(name: string, opening: boolean): void {
    if (name === 'title') this.inTitle = opening;
    const last = this.parts[this.parts.length - 1];
    if (last && !last.endsWith('\n')) this.push('\n', 0, 0, Kind.Virtual);
  }

  text(data: string, start: number, end: number): void {
    const { html } = this;
    const literalStart = end - data.length;
    // A title holds no markup: its words are read, never marked.
    if (this.inTitle) this.push(data, 0, 0, Kind.Virtual);
    else if (literalStart >= this.rawEnd && html.slice(literalStart, end) === data) this.push(data, literalStart, data.length, Kind.Literal);
    else if (start >= this.rawEnd && end <= html.length && html[start] === '&') this.push(data, start, end - start, Kind.Entity);
    // Text whose source cannot be located is kept as words but never marked.
    else this.push(data, 0, 0, Kind.Virtual);
  }

  private push(text: string, raw: number, rawLength: number, kind: Kind): void {
    if (!text) return;
    this.parts.push(text);
    this.pieces.push({ text: this.length, length: text.length, raw, rawLength, kind });
    this.length += text.length;
    if (kind !== Kind.Virtual) this.rawEnd = raw + rawLength;
  }
}

/** The source ranges of text range [start, end), one per run of text not interrupted by markup. */
function sourceRanges(text: string, pieces: Piece[], start: number, end: number): [number, number][] {
  let lo = 0;
  let hi = pieces.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pieces[mid].text + pieces[mid].length <= start) lo = mid + 1;
    else hi = mid;
  }
  // Runs in text space: contiguous pieces whose sources are contiguous too.
  const runs: { from: number; to: number; pieces: Piece[] }[] = [];
  let previous: Piece | undefined;
  for (let i = lo; i < pieces.length && pieces[i].text < end; i++) {
    const p = pieces[i];
    if (p.kind === Kind.Virtual) {
      previous = undefined;
      continue;
    }
    const from = Math.max(start, p.text);
    const to = Math.min(end, p.text + p.length);
    const run = runs[runs.length - 1];
    if (previous && run && previous.raw + previous.rawLength === p.raw) {
      run.to = to;
      run.pieces.push(p);
    } else runs.push({ from, to, pieces: [p] });
    previous = p;
  }
  const ranges: [number, number][] = [];
  for (const run of runs) {
    let { from, to } = run;
    while (from < to && SPACE.test(text[from])) from++;
    while (to > from && SPACE.test(text[to - 1])) to--;
    if (from >= to) continue;
    const first = run.pieces.find((p) => p.text + p.length > from)!;
    const last = run.pieces.findLast((p) => p.text < to)!;
    const rawStart = first.kind === Kind.Literal ? first.raw + (from - first.text) : first.raw;
    const rawEnd = last.kind === Kind.Literal ? last.raw + (to - last.text) : last.raw + last.rawLength;
    ranges.push([rawStart, rawEnd]);
  }
  return ranges;
}

// ---------------------------------------------------------------------------------------------
// Passages

/** The pattern of a run of delimiters, kept for the delimiter lists searches use (usually the default one). */
const delimiterRuns = new Map<string, RegExp>();

function delimiterRun(delimiters: readonly string[]): RegExp {
  const key = delimiters === HIGHLIGHT_DEFAULTS.highlight_delimiters ? '' : JSON.stringify(delimiters);
  let re = delimiterRuns.get(key);
  if (!re) {
    const alternatives = [...delimiters].sort((a, b) => b.length - a.length).map((d) => d.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    re = new RegExp(`(?:${alternatives.join('|')})+`, 'gu');
    if (delimiterRuns.size >= 100) delimiterRuns.clear();
    delimiterRuns.set(key, re);
  }
  return re;
}

/** Splits [0, text.length) after each run of delimiters, keeping the delimiters in the passage. */
function splitPassages(text: string, delimiters: readonly string[]): [number, number][] {
  const passages: [number, number][] = [];
  let start = 0;
  if (delimiters.length) {
    for (const m of text.matchAll(delimiterRun(delimiters))) {
      const cut = m.index + m[0].length;
      // Punctuation inside a word or number (3.5, example.com, a,b) does not end a passage.
      if (cut < text.length && WORD_CHAR.test(text[cut]) && !SPACE.test(m[0][m[0].length - 1])) continue;
      if (cut > start) passages.push([start, cut]);
      start = cut;
    }
  }
  if (start < text.length) passages.push([start, text.length]);
  return passages;
}

// ---------------------------------------------------------------------------------------------
// Matching

interface Passage {
  index: number;
  start: number;
  end: number;
  tokens: Token[];
  /** Marked spans, as token ranges [first, last) within the passage. */
  spans: [number, number][];
  units: Set<number>;
  exact: boolean;
}

/** A word matches by its stem too, as search matched it ("glacier" marks "Glaciers"). */
const sameWord = (t: Token, q: QueryWord) => t.key === q.key || t.stem === q.stem;

function matchPassage(passage: Passage, query: Query, o: Resolved): void {
  const { tokens } = passage;
  // Most passages hold no query word: they are passed over before any table is made for them.
  if (!tokens.some((t) => query.startKeys.has(t.key) || query.startStems.has(t.stem))) return;
  const n = tokens.length;
  const seq = query.sequence;
  const m = seq.length;
  const wordMax = o.v1 ? o.maxLength : 1;

  // longest[i]: the longest run of query words (in query order) that starts at token i, begins and
  // ends with a meaningful word, and is at most `wordMax` long. Computed from the end with one row
  // of common-run lengths per token: O(tokens × query words).
  const longest = new Int32Array(n);
  if (m > 0) {
    let next = new Int32Array(m + 1);
    let row = new Int32Array(m + 1);
    for (let i = n - 1; i >= 0; i--) {
      let best = 0;
      for (let j = m - 1; j >= 0; j--) {
        const q = seq[j];
        row[j] = q && sameWord(tokens[i], q) ? next[j + 1] + 1 : 0;
        if (q && !q.stop && row[j] > best) {
          let len = Math.min(row[j], wordMax);
          while (len > 1 && seq[j + len - 1]!.stop) len--;
          if (len > best) best = len;
        }
      }
      longest[i] = best;
      [next, row] = [row, next];
    }
  }

  for (let i = 0; i < n; ) {
    let length = longest[i];
    let phrase = -1;
    for (const p of query.phrasesByFirst.get(tokens[i].key) ?? []) {
      const keys = query.phrases[p];
      if (keys.length < length || (keys.length === length && phrase >= 0) || i + keys.length > n) continue;
      if (keys.every((k, k2) => tokens[i + k2].key === k)) {
        length = keys.length;
        phrase = p;
      }
    }
    if (length === 0) {
      i++;
      continue;
    }
    if (phrase >= 0) {
      passage.units.add(query.unitOfPhrase[phrase]);
      passage.exact = true;
      for (let s = i; s < i + length; s += o.maxLength) passage.spans.push([s, Math.min(i + length, s + o.maxLength)]);
    } else {
      for (let k = i; k < i + length; k++) {
        const unit = query.unitByKey.get(tokens[k].key);
        if (unit !== undefined) {
          passage.units.add(unit);
          passage.exact = true;
        }
        for (const u of query.unitsByStem.get(tokens[k].stem) ?? []) passage.units.add(u);
      }
      passage.spans.push([i, i + length]);
    }
    i += length;
  }
}

// ---------------------------------------------------------------------------------------------
// Putting it together

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const NEEDS_ESCAPE = /[&<>]/;
const escapeHtml = (s: string) => (NEEDS_ESCAPE.test(s) ? s.replace(/[&<>]/g, (c) => ESCAPES[c]) : s);

function highlightUnsafe(html: string, rawQuery: string, o: Resolved): Highlighted {
  const unchanged = { chunk_html: html, highlights: [] };
  if (!o.enabled || !html || !rawQuery.trim()) return unchanged;
  const query = parsed(rawQuery);
  if (query.unitCount === 0) return unchanged;

  const { text, pieces } = extractText(html);
  // Most passages hold no query word: in ASCII text, those without an anchor are not even read into words.
  const anchored = NOT_ASCII.test(text) ? null : anchorsAt(text.toLowerCase(), query.anchors);
  const passages: Passage[] = [];
  let a = 0;
  for (const [start, end] of splitPassages(text, o.delimiters)) {
    if (anchored) {
      while (a < anchored.length && anchored[a] < start) a++;
      if (a === anchored.length || anchored[a] >= end) continue;
    }
    const tokens = tokenize(text, true, start, end);
    if (tokens.length) passages.push({ index: passages.length, start, end, tokens, spans: [], units: new Set(), exact: false });
  }

  const qualifying = passages.filter((p) => {
    matchPassage(p, query, o);
    if (p.spans.length === 0) return false;
    return !o.v1 || p.exact || p.units.size / query.unitCount >= o.threshold;
  });
  if (qualifying.length === 0) return unchanged;

  // The chunk's HTML, every qualifying passage's matches marked in place.
  const out: string[] = [];
  let copied = 0;
  for (const p of qualifying) {
    for (const [a, b] of p.spans) {
      for (const [rawStart, rawEnd] of sourceRanges(text, pieces, p.tokens[a].start, p.tokens[b - 1].end)) {
        if (rawStart < copied) continue;
        out.push(html.slice(copied, rawStart), o.preTag, html.slice(rawStart, rawEnd), o.postTag);
        copied = rawEnd;
      }
    }
  }
  out.push(html.slice(copied));

  const best = [...qualifying].sort((a, b) => b.units.size - a.units.size || a.index - b.index).slice(0, o.maxNum);
  return { chunk_html: out.join(''), highlights: best.map((p) => passageText(text, p, o)) };
}

/** Where the anchors occur in `lower`, ascending. */
function anchorsAt(lower: string, anchors: string[]): number[] {
  const at: number[] = [];
  for (const anchor of anchors) for (let i = lower.indexOf(anchor); i >= 0; i = lower.indexOf(anchor, i + 1)) at.push(i);
  return at.sort((x, y) => x - y);
}

/** text[a, b) as escaped text on one line. */
const plainText = (text: string, a: number, b: number) => escapeHtml(text.slice(a, b).replace(/\s+/g, ' '));

/** The passage as escaped plain text, cut to the window, with its matches wrapped. */
function passageText(text: string, p: Passage, o: Resolved): string {
  const n = p.tokens.length;
  let from = 0;
  let to = n;
  if (o.window > 0 && n > o.window) {
    from = Math.max(0, p.spans[0][0] - Math.floor(o.window / 2));
    to = Math.min(n, from + o.window);
    from = Math.max(0, to - o.window);
  }
  let start = from === 0 ? p.start : p.tokens[from].start;
  let end = to === n ? p.end : p.tokens[to - 1].end;
  while (start < end && SPACE.test(text[start])) start++;
  while (end > start && SPACE.test(text[end - 1])) end--;

  const parts: string[] = [];
  let at = start;
  for (const [a, b] of p.spans) {
    const spanStart = Math.max(start, p.tokens[a].start);
    const spanEnd = Math.min(end, p.tokens[b - 1].end);
    if (spanStart >= spanEnd) continue;
    parts.push(plainText(text, at, spanStart), o.preTag, plainText(text, spanStart, spanEnd), o.postTag);
    at = spanEnd;
  }
  parts.push(plainText(text, at, end));
  return parts.join('');
}
