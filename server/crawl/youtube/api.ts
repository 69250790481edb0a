// The YouTube Data API v3 as a crawl needs it: a channel (by handle, id or legacy username) with
// its uploads playlist, and that playlist's videos a page at a time (playlistItems costs one unit
// of quota a page, where the search Trieve uses costs a hundred). Requests go to the operator's
// YOUTUBE_API_BASE_URL through outboundFetch with the `youtube` credential, so YOUTUBE_API_KEY is
// sent there only, in the X-Goog-Api-Key header (never in a URL, which an error may quote).
import { OutboundRefusedError, type OutboundResponse, type OutboundSettings, OutboundUnreachableError, outboundFetch } from '../../engines/outbound.js';
import { boundedText } from '../body.js';
import type { ChannelRef } from './channel.js';

/** The instance setting without which no YouTube crawl runs. */
export const YOUTUBE_KEY_SETTING = 'YOUTUBE_API_KEY';
/** The most items the API gives a page. */
export const PAGE_SIZE = 50;
const TIMEOUT_MS = 30_000;
/** A page of 50 items with long descriptions stays well under this. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export interface Channel {
  id: string;
  title: string;
  /** The playlist of every public upload, newest first. */
  uploadsPlaylistId: string;
}

export interface Video {
  id: string;
  title: string;
  description: string;
  /** When the video was published (ISO 8601); null for a private or deleted one. */
  publishedAt: string | null;
  thumbnailUrl: string | null;
}

export interface VideoPage {
  videos: Video[];
  nextPageToken: string | null;
}

/** The API gave no usable answer; `status` is its HTTP status when it gave one. */
export class YoutubeApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'YoutubeApiError';
  }
}

export class YoutubeApi {
  private readonly baseUrl: string;

  /** Throws YoutubeApiError when no key is configured. */
  constructor(
    private readonly outbound: OutboundSettings,
    private readonly signal?: AbortSignal,
  ) {
    if (!outbound.youtube?.apiKey) throw new YoutubeApiError(`${YOUTUBE_KEY_SETTING} is not configured on this instance`, null);
    this.baseUrl = outbound.youtube.baseUrl.replace(/\/+$/, '');
  }

  /** The channel, or null when the API knows none by that name. */
  async channel(ref: ChannelRef): Promise<Channel | null> {
    const by: Record<string, string> = ref.by === 'handle' ? { forHandle: ref.handle } : ref.by === 'id' ? { id: ref.id } : { forUsername: ref.username };
    const answer = await this.get('channels', { part: 'id,snippet,contentDetails', ...by });
    const item = records(answer.items)[0];
    if (!item) return null;
    const uploads = record(record(item.contentDetails).relatedPlaylists).uploads;
    if (typeof item.id !== 'string' || typeof uploads !== 'string' || !uploads)
      throw new YoutubeApiError('the YouTube Data API gave a channel without its uploads', null);
    return { id: item.id, title: text(record(item.snippet).title), uploadsPlaylistId: uploads };
  }

  /** A page of the playlist's videos, from `pageToken` (the first page when null). */
  async playlistPage(playlistId: string, pageToken: string | null): Promise<VideoPage> {
    const answer = await this.get('playlistItems', {
      part: 'snippet,contentDetails',
      playlistId,
      maxResults: String(PAGE_SIZE),
      ...(pageToken ? { pageToken } : {}),
    });
    const videos = records(answer.items).flatMap((item): Video[] => {
      const snippet = record(item.snippet);
      const details = record(item.contentDetails);
      const id = text(details.videoId) || text(record(snippet.resourceId).videoId);
      if (!id) return [];
      const published = text(details.videoPublishedAt);
      return [
        { id, title: text(snippet.title), description: text(snippet.description), publishedAt: published || null, thumbnailUrl: thumbnail(snippet.thumbnails) },
      ];
    });
    const next = text(answer.nextPageToken);
    return { videos, nextPageToken: next || null };
  }

  private async get(resource: string, params: Record<string, string>): Promise<Record<string, unknown>> {
    const url = `${this.baseUrl}/${resource}?${new URLSearchParams(params)}`;
    let response: OutboundResponse;
    try {
      response = await outboundFetch(this.outbound, url, {
        headers: { accept: 'application/json' },
        timeoutMs: TIMEOUT_MS,
        signal: this.signal,
        credential: 'youtube',
      });
    } catch (error) {
      this.signal?.throwIfAborted();
      if (error instanceof OutboundRefusedError || error instanceof OutboundUnreachableError)
        throw new YoutubeApiError(`the YouTube Data API could not be reached: ${error.message}`, null);
      throw error;
    }
    const body = await boundedText(response, MAX_ANSWER_BYTES).catch(() => null);
    let parsed: unknown = null;
    try {
      parsed = body === null ? null : JSON.parse(body);
    } catch {
      // Judged below.
    }
    if (response.status < 200 || response.status > 299)
      throw new YoutubeApiError(`the YouTube Data API answered ${response.status}${reasonOf(parsed)}`, response.status);
    if (!isRecord(parsed)) throw new YoutubeApiError(`the YouTube Data API's answer to ${resource} is not a JSON object`, response.status);
    return parsed;
  }
}

/**
 * Google's reason code of an error answer (`keyInvalid`, `quotaExceeded`, `playlistNotFound`…), a
 * word from a fixed list, so it is named; the answer's message is not repeated.
 */
function reasonOf(answer: unknown): string {
  const reason = record(records(record(record(answer).error).errors)[0]).reason;
  return typeof reason === 'string' && /^[A-Za-z]{1,64}$/.test(reason) ? ` (${reason})` : '';
}

/** The largest usual thumbnail: Trieve shows `high`. */
function thumbnail(thumbnails: unknown): string | null {
  const all = record(thumbnails);
  for (const size of ['high', 'medium', 'standard', 'default', 'maxres']) {
    const url = text(record(all[size]).url);
    if (url) return url;
  }
  return null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const record = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});
const records = (value: unknown): Record<string, unknown>[] => (Array.isArray(value) ? value.filter(isRecord) : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
