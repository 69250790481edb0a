// A stand-in for YouTube, which tests cannot reach: one local HTTP server speaking the shapes of
// the endpoints a YouTube crawl uses.
//
// - The Data API v3 under /youtube/v3: `channels` (by forHandle, id or forUsername; no `items` when
//   none matches) and `playlistItems` (a channel's uploads, `maxResults` at a time, paged with
//   opaque `pageToken`s), refusing a request without the key (403) or with another one (400) in
//   Google's error shape. The key is read from X-Goog-Api-Key or the `key` parameter.
// - youtube.com's pages as the transcript library reads them: /watch (a page holding the player's
//   INNERTUBE_API_KEY), POST /youtubei/v1/player (the caption tracks, whose URLs name
//   https://www.youtube.com as the real player's do) and /api/timedtext (the captions' XML, with
//   the double escaping YouTube gives apostrophes).
//
// A video's captions can be turned off (the player lists no tracks) or made to fail (the timed
// text answers 500). Every request is recorded with the API key header it carried, if any.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInCaption {
  start: number;
  dur: number;
  text: string;
}

export interface StandInVideo {
  /** 11 characters, as YouTube's ids are. */
  id: string;
  title: string;
  description?: string;
  publishedAt?: string;
  /** The captions; `off`: the video has none; `fail`: reading them fails; `gone`: listed as a private video. */
  captions: StandInCaption[] | 'off' | 'fail' | 'gone';
}

export interface StandInChannel {
  /** UC and 22 characters. */
  id: string;
  /** With its @. */
  handle: string;
  username?: string;
  title: string;
  /** Newest first, as an uploads playlist lists them. */
  videos: StandInVideo[];
}

export interface StandInRequest {
  method: string;
  /** Path and query. */
  path: string;
  /** The X-Goog-Api-Key header the request carried, or null. */
  headerKey: string | null;
  userAgent: string;
}

export interface YoutubeStandIn {
  /** YOUTUBE_API_BASE_URL. */
  apiBaseUrl: string;
  /** YOUTUBE_TRANSCRIPT_BASE_URL. */
  transcriptBaseUrl: string;
  apiKey: string;
  channels: StandInChannel[];
  requests: StandInRequest[];
  close(): Promise<void>;
}

/** The key the watch page hands the player: a public key of YouTube's own, not the crawl's. */
const INNERTUBE_KEY = 'AIzaSyStandInInnertubeKey00000000000000';

export async function startYoutubeStandIn(apiKey: string, channels: StandInChannel[]): Promise<YoutubeStandIn> {
  const requests: StandInRequest[] = [];
  const standIn = { apiKey, channels, requests } as YoutubeStandIn;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (part) => (body += part));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const headerKey = (req.headers['x-goog-api-key'] as string | undefined) ?? null;
      const key = headerKey ?? url.searchParams.get('key');
      requests.push({ method: req.method ?? 'GET', path: `${url.pathname}${url.search}`, headerKey, userAgent: req.headers['user-agent'] ?? '' });
      try {
        route(standIn, req, url, body, key, res);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standIn.apiBaseUrl = `${origin}/youtube/v3`;
  standIn.transcriptBaseUrl = origin;
  standIn.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return standIn;
}

function route(standIn: YoutubeStandIn, req: IncomingMessage, url: URL, body: string, key: string | null, res: ServerResponse) {
  const json = (status: number, value: unknown) => void res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(value));
  const googleError = (code: number, status: string, reason: string, message: string) =>
    json(code, { error: { code, message, errors: [{ message, domain: 'global', reason }], status } });

  if (url.pathname.startsWith('/youtube/v3/')) {
    if (!key)
      return googleError(403, 'PERMISSION_DENIED', 'forbidden', 'Method doesn\u2019t allow unregistered callers (callers without established identity).');
    if (key !== standIn.apiKey) return googleError(400, 'INVALID_ARGUMENT', 'badRequest', 'API key not valid. Please pass a valid API key.');
    const q = url.searchParams;
    if (!q.get('part')) return googleError(400, 'INVALID_ARGUMENT', 'required', "No filter selected. Expected one of: ...; 'part' is required");
    if (url.pathname === '/youtube/v3/channels') {
      const handle = q.get('forHandle')?.replace(/^@?/, '@').toLowerCase();
      const found = standIn.channels.filter(
        (c) => (handle && c.handle.toLowerCase() === handle) || q.get('id')?.split(',').includes(c.id) || (c.username && q.get('forUsername') === c.username),
      );
      return json(200, {
        kind: 'youtube#channelListResponse',
        etag: 'stand-in',
        pageInfo: { totalResults: found.length, resultsPerPage: 5 },
        ...(found.length ? { items: found.map(channelResource) } : {}),
      });
    }
    if (url.pathname === '/youtube/v3/playlistItems') {
      const channel = standIn.channels.find((c) => uploadsOf(c) === q.get('playlistId'));
      if (!channel)
        return googleError(
          404,
          'NOT_FOUND',
          'playlistNotFound',
          "The playlist identified with the request's <code>playlistId</code> parameter cannot be found.",
        );
      const size = Math.min(50, Math.max(0, Number(q.get('maxResults') ?? 5)));
      const token = q.get('pageToken');
      const from = token ? offsetOf(token) : 0;
      if (from === null) return googleError(400, 'INVALID_ARGUMENT', 'invalidPageToken', 'The request specifies an invalid page token.');
      const page = channel.videos.slice(from, from + size);
      const next = from + size < channel.videos.length ? tokenOf(from + size) : null;
      return json(200, {
        kind: 'youtube#playlistItemListResponse',
        etag: 'stand-in',
        ...(next ? { nextPageToken: next } : {}),
        ...(from > 0 ? { prevPageToken: tokenOf(Math.max(0, from - size)) } : {}),
        items: page.map((video, i) => playlistItem(channel, video, from + i)),
        pageInfo: { totalResults: channel.videos.length, resultsPerPage: size },
      });
    }
    return googleError(404, 'NOT_FOUND', 'notFound', 'Not Found');
  }

  const video = (id: string | null) => standIn.channels.flatMap((c) => c.videos).find((v) => v.id === id);
  if (url.pathname === '/watch' && req.method === 'GET') {
    const found = video(url.searchParams.get('v'));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return void res.end(
      `<!DOCTYPE html><html><head><title>${found?.title ?? 'YouTube'} - YouTube</title></head><body><script>ytcfg.set({"INNERTUBE_API_KEY":"${INNERTUBE_KEY}","INNERTUBE_CLIENT_NAME":"WEB"});</script></body></html>`,
    );
  }
  if (url.pathname === '/youtubei/v1/player' && req.method === 'POST') {
    if (url.searchParams.get('key') !== INNERTUBE_KEY) return json(403, { error: { code: 403, status: 'PERMISSION_DENIED' } });
    const found = video((JSON.parse(body) as { videoId?: string }).videoId ?? null);
    if (!found || found.captions === 'gone') return json(200, { playabilityStatus: { status: 'ERROR', reason: 'Video unavailable' } });
    const playable = { playabilityStatus: { status: 'OK' }, videoDetails: { videoId: found.id, title: found.title } };
    if (found.captions === 'off') return json(200, playable);
    return json(200, {
      ...playable,
      captions: {
        playerCaptionsTracklistRenderer: {
          captionTracks: [
            {
              baseUrl: `https://www.youtube.com/api/timedtext?v=${found.id}&caps=asr&lang=en&fmt=srv3`,
              name: { simpleText: 'English' },
              vssId: '.en',
              languageCode: 'en',
            },
          ],
        },
      },
    });
  }
  if (url.pathname === '/api/timedtext' && req.method === 'GET') {
    const found = video(url.searchParams.get('v'));
    if (!found || !Array.isArray(found.captions)) {
      if (found?.captions === 'fail') return void res.writeHead(500, { 'content-type': 'text/html' }).end('<html>Error 500</html>');
      return void res.writeHead(404).end();
    }
    const lines = found.captions.map((c) => `<text start="${c.start}" dur="${c.dur}">${timedTextEscape(c.text)}</text>`);
    res.writeHead(200, { 'content-type': 'text/xml; charset=UTF-8' });
    return void res.end(`<?xml version="1.0" encoding="utf-8" ?><transcript>${lines.join('')}</transcript>`);
  }
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
}

const uploadsOf = (channel: StandInChannel) => `UU${channel.id.slice(2)}`;
const tokenOf = (offset: number) => Buffer.from(`stand-in:${offset}`).toString('base64url');

function offsetOf(token: string): number | null {
  const match = /^stand-in:(\d+)$/.exec(Buffer.from(token, 'base64url').toString());
  return match ? Number(match[1]) : null;
}

function channelResource(channel: StandInChannel) {
  return {
    kind: 'youtube#channel',
    etag: 'stand-in',
    id: channel.id,
    snippet: { title: channel.title, description: '', customUrl: channel.handle.toLowerCase(), publishedAt: '2015-01-01T00:00:00Z' },
    contentDetails: { relatedPlaylists: { likes: '', uploads: uploadsOf(channel) } },
  };
}

function playlistItem(channel: StandInChannel, video: StandInVideo, position: number) {
  const gone = video.captions === 'gone';
  const thumbnails = gone
    ? {}
    : {
        default: { url: `https://i.ytimg.com/vi/${video.id}/default.jpg`, width: 120, height: 90 },
        high: { url: `https://i.ytimg.com/vi/${video.id}/hqdefault.jpg`, width: 480, height: 360 },
      };
  return {
    kind: 'youtube#playlistItem',
    etag: 'stand-in',
    id: Buffer.from(`${uploadsOf(channel)}.${video.id}`).toString('base64url'),
    snippet: {
      publishedAt: video.publishedAt ?? '2024-05-01T12:00:00Z',
      channelId: channel.id,
      title: gone ? 'Private video' : video.title,
      description: gone ? 'This video is private.' : (video.description ?? ''),
      thumbnails,
      channelTitle: channel.title,
      playlistId: uploadsOf(channel),
      position,
      resourceId: { kind: 'youtube#video', videoId: video.id },
    },
    contentDetails: gone ? { videoId: video.id } : { videoId: video.id, videoPublishedAt: video.publishedAt ?? '2024-05-01T12:00:00Z' },
  };
}

/** As YouTube's timed text escapes a caption: XML escaping, with an apostrophe escaped twice. */
const timedTextEscape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&amp;#39;');
