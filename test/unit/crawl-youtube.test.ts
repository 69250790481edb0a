// The YouTube crawl source against the YouTube stand-in (test/support/youtubeStandIn.ts) over real
// HTTP on 127.0.0.1: a channel found by handle, id or username, its uploads read page by page, each
// video's transcript grouped into chunks with links at their start, videos without transcripts
// skipped with the reason, the limit, stable tracking ids, the API key sent to the API only, a
// channel or key the API refuses, channel URLs, abort.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SourceEvent, SourcePage } from '../../server/crawl/types.js';
import { CHUNK_WORDS, groupSegments } from '../../server/crawl/youtube/chunks.js';
import { channelRef, crawlYoutube, type YoutubeCrawlOptions } from '../../server/crawl/youtube/index.js';
import type { OutboundSettings } from '../../server/engines/outbound.js';
import { type StandInVideo, startYoutubeStandIn, type YoutubeStandIn } from '../support/youtubeStandIn.js';

const KEY = 'AIzaSyTestKeyForTheStandIn0123456789';
const CHANNEL_ID = 'UCstandInChannel00000001';

/** Fifty words of segment `i`. */
const fifty = (i: number) => Array.from({ length: 50 }, (_, w) => `w${i}x${w}`).join(' ');

const LONG: StandInVideo = {
  id: 'vidGlacier1',
  title: 'Glaciers & <ice>',
  description: 'How glaciers move',
  publishedAt: '2024-03-04T05:06:07Z',
  captions: [
    { start: 0.5, dur: 4, text: "the glacier's\nsnout" },
    ...[1, 2, 3, 4].map((i) => ({ start: i * 10.25, dur: 10, text: fifty(i) })),
    { start: 61.9, dur: 3, text: '  [Music]  ' },
    { start: 65, dur: 3, text: '<font color="#E5E5E5">crevasses</font> ahead' },
  ],
};
const FILLERS: StandInVideo[] = Array.from({ length: 56 }, (_, i) => ({
  id: `vidFill${String(i).padStart(4, '0')}`,
  title: `Filler ${i}`,
  captions: [{ start: 1, dur: 2, text: `moraine number ${i}` }],
}));
const VIDEOS: StandInVideo[] = [
  LONG,
  { id: 'vidNoCapsA2', title: 'No captions', captions: 'off' },
  { id: 'vidFailsA03', title: 'Failing captions', captions: 'fail' },
  { id: 'vidPrivate4', title: 'Secret', captions: 'gone' },
  ...FILLERS,
];

let standIn: YoutubeStandIn;
let outbound: OutboundSettings;

beforeAll(async () => {
  standIn = await startYoutubeStandIn(KEY, [
    { id: CHANNEL_ID, handle: '@GlacierTalks', username: 'glaciertalks', title: 'Glacier Talks', videos: VIDEOS },
    { id: 'UCemptyChannel0000000002', handle: '@Empty', title: 'Empty', videos: [] },
  ]);
  // No private address is allowed: the stand-in is reached as the operator's own endpoints.
  outbound = {
    allowPrivate: [],
    embedding: null,
    reranker: null,
    llm: null,
    youtube: { baseUrl: standIn.apiBaseUrl, apiKey: KEY, keyHeader: 'x-goog-api-key' },
    youtubeTranscripts: { baseUrl: standIn.transcriptBaseUrl, apiKey: null },
  };
});
afterAll(() => standIn?.close());
beforeEach(() => {
  standIn.requests.length = 0;
});

async function collect(options: Partial<YoutubeCrawlOptions> = {}, settings: OutboundSettings = outbound, signal?: AbortSignal) {
  const events: SourceEvent[] = [];
  for await (const event of crawlYoutube({ channelUrl: 'https://www.youtube.com/@GlacierTalks', limit: 1000, ...options }, { outbound: settings, signal }))
    events.push(event);
  return events;
}

const pagesOf = (events: SourceEvent[]): SourcePage[] => events.flatMap((e) => ('page' in e ? [e.page] : []));
const skipsOf = (events: SourceEvent[]) => events.flatMap((e) => ('skipped' in e ? [e.skipped] : []));
const watch = (id: string) => `https://www.youtube.com/watch?v=${id}`;
const paths = (prefix: string) => standIn.requests.filter((r) => r.path.startsWith(prefix)).map((r) => r.path);

describe('crawlYoutube', () => {
  it('reads every page of the uploads, a page per video with a transcript, skipping the others with the reason', async () => {
    const events = await collect();
    const pages = pagesOf(events);
    expect(pages.map((p) => p.url)).toEqual([watch(LONG.id), ...FILLERS.map((v) => watch(v.id))]);
    expect(skipsOf(events)).toEqual([
      { url: watch('vidNoCapsA2'), reason: 'no transcript: its captions are turned off' },
      { url: watch('vidFailsA03'), reason: 'no transcript: reading it failed (status 500)' },
      { url: watch('vidPrivate4'), reason: 'the video is private or deleted' },
    ]);
    expect(paths('/youtube/v3/channels')).toEqual(['/youtube/v3/channels?part=id%2Csnippet%2CcontentDetails&forHandle=%40GlacierTalks']);
    const listing = paths('/youtube/v3/playlistItems');
    expect(listing).toHaveLength(2);
    expect(listing[0]).toBe('/youtube/v3/playlistItems?part=snippet%2CcontentDetails&playlistId=UUstandInChannel00000001&maxResults=50');
    expect(listing[1]).toMatch(/&pageToken=[\w-]+$/);
    // The player's caption URLs name https://www.youtube.com: they were read from the stand-in.
    expect(paths('/api/timedtext')).toHaveLength(1 + 1 + FILLERS.length);
    expect(paths('/api/timedtext')[0]).toBe(`/api/timedtext?v=${LONG.id}&caps=asr&lang=en`);
  });

  it('groups captions into chunks of at most 200 words, each linking to the second it starts', async () => {
    const [long, filler] = pagesOf(await collect({ limit: 2 }));
    expect(long).toMatchObject({ url: watch(LONG.id), title: 'Glaciers & <ice>' });
    expect(long.chunks.map((c) => c.link)).toEqual([`${watch(LONG.id)}&t=0`, `${watch(LONG.id)}&t=41`]);
    const [first, second] = long.chunks;
    expect(first.headings).toEqual(['Glaciers & <ice>']);
    // Twice-escaped apostrophes and caption markup come out as plain text, escaped once for HTML.
    expect(first.html).toBe(`<h1>Glaciers &amp; &lt;ice&gt;</h1><p>the glacier's snout ${fifty(1)} ${fifty(2)} ${fifty(3)}</p>`);
    expect(second.html).toBe(`<h1>Glaciers &amp; &lt;ice&gt;</h1><p>${fifty(4)} [Music] crevasses ahead</p>`);
    expect(first).toMatchObject({
      imageUrls: [`https://i.ytimg.com/vi/${LONG.id}/hqdefault.jpg`],
      timeStamp: '2024-03-04T05:06:07.000Z',
      metadata: { description: 'How glaciers move', yt_preview_src: `https://i.ytimg.com/vi/${LONG.id}/hqdefault.jpg`, start_seconds: 0 },
    });
    expect(filler.chunks).toMatchObject([{ html: '<h1>Filler 0</h1><p>moraine number 0</p>', link: `${watch('vidFill0000')}&t=1` }]);
  });

  it('stops after `limit` videos stored, asking for no more pages or transcripts', async () => {
    const events = await collect({ limit: 2 });
    expect(pagesOf(events).map((p) => p.url)).toEqual([watch(LONG.id), watch('vidFill0000')]);
    expect(skipsOf(events)).toHaveLength(3);
    expect(paths('/youtube/v3/playlistItems')).toHaveLength(1);
    expect(paths('/api/timedtext').map((p) => new URL(p, 'http://x').searchParams.get('v'))).toEqual([LONG.id, 'vidFailsA03', 'vidFill0000']);

    standIn.requests.length = 0;
    expect(pagesOf(await collect({ limit: 55 }))).toHaveLength(55);
    expect(paths('/youtube/v3/playlistItems')).toHaveLength(2);
  });

  it('gives chunks tracking ids that a re-crawl repeats and that differ by video and position', async () => {
    const ids = async () => pagesOf(await collect({ limit: 5 })).flatMap((p) => p.chunks.map((c) => c.trackingId));
    const first = await ids();
    expect(first).toHaveLength(6);
    expect(await ids()).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
  });

  it('sends the API key to the API only, in a header, never in a URL', async () => {
    await collect({ limit: 3 });
    const api = standIn.requests.filter((r) => r.path.startsWith('/youtube/v3/'));
    const others = standIn.requests.filter((r) => !r.path.startsWith('/youtube/v3/'));
    expect(api.length).toBeGreaterThan(0);
    expect(others.length).toBeGreaterThan(0);
    expect(api.every((r) => r.headerKey === KEY)).toBe(true);
    expect(others.every((r) => r.headerKey === null)).toBe(true);
    expect(standIn.requests.some((r) => r.path.includes(KEY))).toBe(false);
  });

  it('finds a channel by its id or legacy username as by its handle', async () => {
    for (const channelUrl of [
      `https://youtube.com/channel/${CHANNEL_ID}/videos`,
      'https://m.youtube.com/user/glaciertalks',
      'https://www.youtube.com/c/GlacierTalks',
    ]) {
      expect(pagesOf(await collect({ channelUrl, limit: 1 })).map((p) => p.url)).toEqual([watch(LONG.id)]);
    }
  });

  it('reports a channel the API does not know, an empty one, or a key it refuses, as skipped, and ends', async () => {
    const unknown = await collect({ channelUrl: 'https://www.youtube.com/@NoSuchChannel' });
    expect(unknown).toEqual([{ skipped: { url: 'https://www.youtube.com/@NoSuchChannel', reason: 'the YouTube Data API knows no such channel' } }]);
    expect(await collect({ channelUrl: 'https://www.youtube.com/@Empty' })).toEqual([]);

    const wrongKey = await collect({}, { ...outbound, youtube: { ...outbound.youtube!, apiKey: 'AIzaSyWrongKey' } });
    expect(wrongKey).toEqual([{ skipped: { url: 'https://www.youtube.com/@GlacierTalks', reason: 'the YouTube Data API answered 400 (badRequest)' } }]);
    const noKey = await collect({}, { ...outbound, youtube: null });
    expect(noKey).toEqual([{ skipped: { url: 'https://www.youtube.com/@GlacierTalks', reason: 'YOUTUBE_API_KEY is not configured on this instance' } }]);
  });

  it('throws the reason when aborted, and refuses a URL that names no channel', async () => {
    const controller = new AbortController();
    const events: SourceEvent[] = [];
    await expect(
      (async () => {
        for await (const event of crawlYoutube({ channelUrl: 'https://www.youtube.com/@GlacierTalks', limit: 100 }, { outbound, signal: controller.signal })) {
          events.push(event);
          controller.abort(new Error('stopped by the test'));
        }
      })(),
    ).rejects.toThrow('stopped by the test');
    expect(events).toHaveLength(1);
    await expect(collect({ channelUrl: 'https://www.youtube.com/watch?v=vidGlacier1' })).rejects.toThrow(TypeError);
  });
});

describe('channelRef', () => {
  it.each([
    ['https://www.youtube.com/@GlacierTalks', { by: 'handle', handle: '@GlacierTalks' }],
    ['https://youtube.com/@glacier.talks-1/videos?x=1', { by: 'handle', handle: '@glacier.talks-1' }],
    ['https://www.youtube.com/%40Gl%C3%A4tscher', { by: 'handle', handle: '@Glätscher' }],
    [`https://m.youtube.com/channel/${CHANNEL_ID}`, { by: 'id', id: CHANNEL_ID }],
    ['http://www.youtube.com/user/glaciertalks', { by: 'username', username: 'glaciertalks' }],
    ['https://www.youtube.com/c/GlacierTalks/about', { by: 'handle', handle: '@GlacierTalks' }],
  ])('reads %s as a channel', (url, ref) => {
    expect(channelRef(url)).toEqual(ref);
  });

  it.each([
    'https://www.youtube.com/watch?v=vidGlacier1',
    'https://www.youtube.com/playlist?list=PL123',
    'https://www.youtube.com/',
    'https://www.youtube.com/channel/not-an-id',
    'https://www.youtube.com/@x',
    'https://youtu.be/vidGlacier1',
    'https://www.example.com/@GlacierTalks',
    'ftp://www.youtube.com/@GlacierTalks',
    'not a url',
  ])('refuses %s', (url) => {
    expect(channelRef(url)).toHaveProperty('error');
  });
});

describe('groupSegments', () => {
  it('keeps a segment longer than the bound whole, in a chunk of its own, and drops empty ones', () => {
    const long = Array.from({ length: CHUNK_WORDS + 5 }, (_, i) => `x${i}`).join(' ');
    expect(
      groupSegments([
        { offset: 3, duration: 1, text: 'before' },
        { offset: 4.6, duration: 1, text: long },
        { offset: 9, duration: 1, text: ' \n ' },
        { offset: 12, duration: 1, text: 'after &amp; done' },
      ]),
    ).toEqual([
      { start: 3, text: 'before' },
      { start: 4.6, text: long },
      { start: 12, text: 'after & done' },
    ]);
    expect(groupSegments([])).toEqual([]);
  });
});
