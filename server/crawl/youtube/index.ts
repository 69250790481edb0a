// A YouTube channel as a crawl source: the channel looked up through the YouTube Data API (its
// handle, id or username), its uploads read a page at a time, newest first, and each video's
// transcript made into chunks (chunks.ts), until `limit` videos are stored. A video without a
// transcript (captions off, none made, the request failing) is skipped with the reason and the
// crawl goes on; a channel that cannot be found, or a listing page that fails, is reported as
// skipped and ends the crawl, as the pages after it cannot be reached.
import type { OutboundSettings } from '../../engines/outbound.js';
import { HostPacer } from '../pacer.js';
import type { SourceEvent } from '../types.js';
import { YoutubeApi, YoutubeApiError } from './api.js';
import { channelRef, channelUrl } from './channel.js';
import { videoPage, videoUrl } from './chunks.js';
import { fetchSegments, TranscriptError } from './transcript.js';

export { channelRef } from './channel.js';
export { YOUTUBE_KEY_SETTING, YoutubeApi, YoutubeApiError } from './api.js';

export interface YoutubeCrawlOptions {
  /** The channel's address: https://www.youtube.com/@handle, /channel/<id>, /user/<name>. */
  channelUrl: string;
  /** The most videos stored. */
  limit: number;
}

export interface YoutubeCrawlDeps {
  /** With the YouTube API's endpoint and key, and where transcripts are read. */
  outbound: OutboundSettings;
  /** Stops the crawl: the iteration throws the signal's reason. */
  signal?: AbortSignal;
  /** The pace of the transcript requests (the Data API is an API, metered by its quota). */
  politeness?: { minDelayMs: number };
}

/** What the API lists in place of a video its owner made private or deleted. */
const GONE_TITLES = new Set(['Private video', 'Deleted video']);

export async function* crawlYoutube(options: YoutubeCrawlOptions, deps: YoutubeCrawlDeps): AsyncGenerator<SourceEvent> {
  const ref = channelRef(options.channelUrl);
  if ('error' in ref) throw new TypeError(`channelUrl: ${ref.error}`);
  const channelAt = channelUrl(ref);
  const limit = Number.isFinite(options.limit) ? Math.max(0, Math.floor(options.limit)) : 0;
  if (limit === 0) return;
  const failed = (reason: string): SourceEvent => ({ skipped: { url: channelAt, reason } });

  let api: YoutubeApi;
  let uploads: string;
  try {
    api = new YoutubeApi(deps.outbound, deps.signal);
    const channel = await api.channel(ref);
    if (!channel) {
      yield failed('the YouTube Data API knows no such channel');
      return;
    }
    uploads = channel.uploadsPlaylistId;
  } catch (error) {
    if (!(error instanceof YoutubeApiError)) throw error;
    yield failed(error.message);
    return;
  }

  const transcripts = { outbound: deps.outbound, pacer: new HostPacer(deps.politeness?.minDelayMs ?? 0, deps.signal), signal: deps.signal };
  // A listing whose pages repeat (or whose tokens loop) yields each video once, and ends.
  const seen = new Set<string>();
  const tokens = new Set<string>();
  let taken = 0;
  let token: string | null = null;
  do {
    deps.signal?.throwIfAborted();
    let videos;
    try {
      ({ videos, nextPageToken: token } = await api.playlistPage(uploads, token));
    } catch (error) {
      if (!(error instanceof YoutubeApiError)) throw error;
      yield failed(`the channel's videos could not be listed: ${error.message}`);
      return;
    }
    for (const video of videos) {
      if (taken >= limit) return;
      if (seen.has(video.id)) continue;
      seen.add(video.id);
      deps.signal?.throwIfAborted();
      const skip = (reason: string): SourceEvent => ({ skipped: { url: videoUrl(video.id), reason } });
      if (!video.publishedAt && GONE_TITLES.has(video.title)) {
        yield skip('the video is private or deleted');
        continue;
      }
      let segments;
      try {
        segments = await fetchSegments(video.id, transcripts);
      } catch (error) {
        if (!(error instanceof TranscriptError)) throw error;
        yield skip(`no transcript: ${error.message}`);
        continue;
      }
      const page = videoPage(video, segments);
      if (page.chunks.length === 0) {
        yield skip('no transcript: its captions hold no text');
        continue;
      }
      taken++;
      yield { page };
    }
    if (token && tokens.has(token)) return;
    if (token) tokens.add(token);
  } while (token && taken < limit);
}
