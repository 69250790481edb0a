// A deterministic synthetic corpus: help-centre style HTML chunks of 50–150 words drawn from a fixed
// vocabulary (content words Zipf-distributed, as in real text), with tracking ids, tags, metadata,
// links, time stamps and numbers. The same seed and size always give the same chunks, byte for byte.
import type { ChunkReqPayload } from '../sdk/src/generated/types.gen.js';

/** mulberry32: a small, fast, seedable PRNG with a full 2^32 period. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FUNCTION_WORDS = (
  'the a an of to in and or for with on at by from as is are was be it this that these you your we our ' +
  'can will may should not when if then than into after before each every all any some more most only also'
).split(' ');

// Content words of product documentation, billing, support and catalogue pages, most common first.
const CONTENT_WORDS = (
  'account user data file page setting order payment customer product service time support team report ' +
  'search result access key dataset chunk document update change request error message email price plan ' +
  'invoice refund delivery shipping address password login session token network server client browser ' +
  'application mobile device storage backup export import upload download folder project workspace member ' +
  'role permission policy security privacy record history version release feature option default limit ' +
  'quota usage billing subscription trial discount coupon tax currency card bank transfer receipt contract ' +
  'agreement term condition notice warning issue problem solution guide tutorial example question answer ' +
  'article topic category tag label filter sort query index field value column table row list item detail ' +
  'summary overview status progress task job queue worker schedule event notification alert reminder ' +
  'calendar meeting invitation contact phone chat ticket agent manager admin owner organization company ' +
  'office branch region country language locale format template theme layout design color image video audio ' +
  'link button menu panel dashboard chart graph metric analytics insight trend forecast budget cost revenue ' +
  'profit sale stock inventory warehouse supplier vendor partner integration plugin extension connector api ' +
  'endpoint webhook callback integration sync cache memory disk cpu performance latency speed throughput ' +
  'capacity scale cluster node replica region zone availability uptime outage incident recovery restore ' +
  'migration upgrade install configure enable disable create delete remove rename move copy share publish ' +
  'archive restore verify confirm approve reject cancel renew extend reduce increase improve optimise ' +
  'monitor track measure compare review check test validate deploy build run start stop pause resume retry ' +
  'open close send receive forward reply assign escalate resolve merge split combine convert translate ' +
  'secure private public shared internal external manual automatic optional required available pending ' +
  'active inactive expired recent previous current next daily weekly monthly annual quick simple advanced ' +
  'standard premium basic custom flexible reliable fast slow large small new old full partial empty valid ' +
  'invalid missing duplicate unique total average maximum minimum exact approximate relevant related similar ' +
  'different specific general detailed brief clear complete correct accurate secure encrypted compressed ' +
  'laptop monitor keyboard headphone speaker camera charger cable adapter battery screen lens tripod bag ' +
  'jacket shoe shirt dress watch ring bottle kettle blender lamp chair desk sofa mattress pillow blanket ' +
  'garden tool drill saw hammer paint brush tent bicycle helmet ball racket glove sweater scarf boot sandal ' +
  'coffee tea chocolate snack vitamin cream shampoo soap perfume brush towel toy puzzle book novel magazine ' +
  'warranty guarantee exchange return repair replacement part accessory bundle kit set pack size weight ' +
  'material cotton leather steel wood plastic glass ceramic rubber aluminium wool silk linen bamboo'
)
  .split(' ')
  .filter((w, i, all) => all.indexOf(w) === i);

/** The tag of 1 % of the chunks. */
const RARE_TAG = 'archived';

const TAGS = [
  'billing',
  'account',
  'security',
  'shipping',
  'returns',
  'api',
  'mobile',
  'catalogue',
  'privacy',
  'onboarding',
  'reports',
  'integrations',
  'troubleshooting',
  'release-notes',
  'pricing',
  'faq',
];
const AUTHORS = ['ana', 'bo', 'chen', 'dara', 'eli', 'fatima', 'gus', 'hana'];
const SECTIONS = ['help', 'docs', 'blog', 'store', 'changelog'];
const LANGS = ['en', 'en', 'en', 'en-GB', 'en-US'];

/** Cumulative Zipf–Mandelbrot weights (s = 1.07, q = 4) over the content words. */
const ZIPF_CDF = (() => {
  const weights = CONTENT_WORDS.map((_, rank) => 1 / (rank + 1 + 4) ** 1.07);
  const total = weights.reduce((a, b) => a + b, 0);
  let sum = 0;
  return weights.map((w) => (sum += w / total));
})();

export interface CorpusOptions {
  count: number;
  seed?: number;
  /** Prefix of the tracking ids; different prefixes keep corpora apart in one dataset. */
  prefix?: string;
}

export interface CorpusStats {
  chunks: number;
  words: { min: number; max: number; mean: number };
  htmlBytes: { mean: number; total: number };
}

export function generateCorpus({ count, seed = 42, prefix = 'doc' }: CorpusOptions): ChunkReqPayload[] {
  const random = prng(seed);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const contentWord = () => {
    const r = random();
    let lo = 0;
    let hi = ZIPF_CDF.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ZIPF_CDF[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    return CONTENT_WORDS[lo];
  };
  const word = () => (random() < 0.35 ? pick(FUNCTION_WORDS) : contentWord());
  const capital = (w: string) => w[0].toUpperCase() + w.slice(1);

  /** A run of `n` words with occasional inline markup and entities. */
  const phrase = (n: number): string => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const w = word();
      const r = random();
      if (r < 0.03) out.push(`<b>${w}</b>`);
      else if (r < 0.05) out.push(`<em>${w}</em>`);
      else if (r < 0.06) out.push(`<a href="https://docs.example.com/${w}">${w}</a>`);
      else if (r < 0.065) out.push(`<code>${w}_id</code>`);
      else if (r < 0.07) out.push(`${w} &amp;`);
      else out.push(w);
    }
    return out.join(' ');
  };
  /** Sentences totalling `n` words. */
  const sentences = (n: number): string => {
    const out: string[] = [];
    while (n > 0) {
      const len = Math.min(n, int(6, 18));
      const text = phrase(len);
      out.push((text.startsWith('<') ? text : capital(text)) + (random() < 0.1 ? '?' : '.'));
      n -= len;
    }
    return out.join(' ');
  };

  const chunks: ChunkReqPayload[] = [];
  for (let i = 0; i < count; i++) {
    const words = int(50, 150);
    const shape = random();
    let html: string;
    if (shape < 0.5) {
      html = `<p>${sentences(words)}</p>`;
    } else if (shape < 0.7) {
      const title = int(2, 6);
      html = `<h3>${capital(phrase(title))}</h3><p>${sentences(words - title)}</p>`;
    } else if (shape < 0.85) {
      const first = int(20, words - 20);
      html = `<p>${sentences(first)}</p><p>${sentences(words - first)}</p>`;
    } else {
      const intro = int(15, words - 30);
      const items = int(2, 4);
      const per = Math.floor((words - intro) / items);
      const lis = Array.from({ length: items }, (_, k) => `<li>${sentences(k === items - 1 ? words - intro - per * (items - 1) : per)}</li>`);
      html = `<p>${sentences(intro)}</p><ul>${lis.join('')}</ul>`;
    }
    const tags = [...new Set(Array.from({ length: int(1, 3) }, () => pick(TAGS)))];
    // One chunk in a hundred, by position (the random stream stays as it was): a selective filter.
    if (i % 100 === 37) tags.push(RARE_TAG);
    const section = pick(SECTIONS);
    const year = int(2019, 2025);
    const month = String(int(1, 12)).padStart(2, '0');
    const day = String(int(1, 28)).padStart(2, '0');
    const time = `${String(int(0, 23)).padStart(2, '0')}:${String(int(0, 59)).padStart(2, '0')}:${String(int(0, 59)).padStart(2, '0')}`;
    chunks.push({
      chunk_html: html,
      tracking_id: `${prefix}-${String(i).padStart(7, '0')}`,
      tag_set: tags,
      link: `https://docs.example.com/${section}/${contentWord()}-${i}`,
      time_stamp: `${year}-${month}-${day}T${time}`,
      num_value: Math.round(random() * 50_000) / 100,
      metadata: {
        author: pick(AUTHORS),
        section,
        lang: pick(LANGS),
        rank: int(1, 100),
        published: random() < 0.9,
        version: `v${int(1, 4)}.${int(0, 9)}`,
      },
    });
  }
  return chunks;
}

/** Word counts as a reader sees them (markup and entities stripped). */
export function corpusStats(chunks: ChunkReqPayload[]): CorpusStats {
  let min = Infinity;
  let max = 0;
  let words = 0;
  let bytes = 0;
  for (const c of chunks) {
    const html = c.chunk_html ?? '';
    bytes += Buffer.byteLength(html);
    const n = html
      .replace(/<[^>]+>/g, ' ')
      .replace(/&[a-z]+;/g, ' ')
      .split(/\s+/)
      .filter((w) => /[a-z0-9]/i.test(w)).length;
    min = Math.min(min, n);
    max = Math.max(max, n);
    words += n;
  }
  return {
    chunks: chunks.length,
    words: { min: chunks.length ? min : 0, max, mean: chunks.length ? Math.round(words / chunks.length) : 0 },
    htmlBytes: { mean: chunks.length ? Math.round(bytes / chunks.length) : 0, total: bytes },
  };
}
