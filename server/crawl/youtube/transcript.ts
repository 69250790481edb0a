// A video's captions, read as the youtube-transcript-plus library reads them (the way Trieve's
// Rust crate does too): the watch page for the player's key, the player for the caption tracks,
// then the first track's timed text. Every request the library makes goes through outboundFetch
// here, paced like a crawled site, with its answer bounded; requests to https://www.youtube.com
// (the library's, and the caption URLs the player names) go to YOUTUBE_TRANSCRIPT_BASE_URL instead.
import {
  type FetchParams,
  type TranscriptSegment,
  YoutubeTranscript,
  YoutubeTranscriptDisabledError,
  YoutubeTranscriptNotAvailableError,
  YoutubeTranscriptNotAvailableLanguageError,
  YoutubeTranscriptTooManyRequestError,
  YoutubeTranscriptVideoUnavailableError,
} from 'youtube-transcript-plus';
import { OutboundRefusedError, type OutboundSettings, OutboundUnreachableError, outboundFetch } from '../../engines/outbound.js';
import { boundedText } from '../body.js';
import type { HostPacer } from '../pacer.js';

const YOUTUBE = 'https://www.youtube.com';
const TIMEOUT_MS = 30_000;
/** A watch page is about 1 MB; a long video's timed text a few hundred kB. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Statuses whose answers may carry no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

export type Segment = Pick<TranscriptSegment, 'text' | 'offset' | 'duration'>;

export interface TranscriptDeps {
  outbound: OutboundSettings;
  pacer: HostPacer;
  signal?: AbortSignal;
}

/** Why a video's transcript could not be read, in words of our own. */
export class TranscriptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TranscriptError';
  }
}

/** The video's caption segments, in order; throws TranscriptError when it has none to give. */
export async function fetchSegments(videoId: string, deps: TranscriptDeps): Promise<Segment[]> {
  const base = (deps.outbound.youtubeTranscripts?.baseUrl ?? YOUTUBE).replace(/\/+$/, '');
  // The library reads a failed status as "unavailable": the status says more.
  let failedStatus: number | null = null;
  const request = async (params: FetchParams) => {
    const response = await viaOutbound(params, base, deps);
    if (!response.ok) failedStatus ??= response.status;
    return response;
  };
  const reader = new YoutubeTranscript({ videoFetch: request, playerFetch: request, transcriptFetch: request, signal: deps.signal });
  try {
    return (await reader.fetchTranscript(videoId)) as TranscriptSegment[];
  } catch (error) {
    deps.signal?.throwIfAborted();
    throw new TranscriptError(
      failedStatus && !(error instanceof YoutubeTranscriptTooManyRequestError) ? `reading it failed (status ${failedStatus})` : reasonOf(error),
    );
  }
}

async function viaOutbound(params: FetchParams, base: string, deps: TranscriptDeps): Promise<Response> {
  const url = params.url.startsWith(`${YOUTUBE}/`) ? base + params.url.slice(YOUTUBE.length) : params.url;
  const headers: Record<string, string> = { ...params.headers };
  if (params.userAgent) headers['user-agent'] = params.userAgent;
  if (params.lang) headers['accept-language'] = params.lang;
  return deps.pacer.paced(url, async () => {
    const response = await outboundFetch(deps.outbound, url, {
      method: params.method ?? 'GET',
      headers,
      body: params.body,
      timeoutMs: TIMEOUT_MS,
      signal: deps.signal,
      credential: 'youtubeTranscripts',
    });
    const body = await boundedText(response, MAX_ANSWER_BYTES);
    if (body === null) throw new TranscriptError(`an answer larger than ${MAX_ANSWER_BYTES} bytes`);
    // The library reads the answer as it would fetch's: a Response, already read and bounded here.
    return new Response(NULL_BODY.has(response.status) ? null : body, {
      status: response.status,
      headers: { 'content-type': response.headers.get('content-type') ?? 'text/plain' },
    });
  });
}

function reasonOf(error: unknown): string {
  if (error instanceof TranscriptError) return error.message;
  if (error instanceof OutboundRefusedError) return `refused: ${error.message}`;
  if (error instanceof OutboundUnreachableError) return error.message;
  if (error instanceof YoutubeTranscriptDisabledError) return 'its captions are turned off';
  if (error instanceof YoutubeTranscriptNotAvailableLanguageError || error instanceof YoutubeTranscriptNotAvailableError) return 'none is available';
  if (error instanceof YoutubeTranscriptVideoUnavailableError) return 'the video is unavailable';
  if (error instanceof YoutubeTranscriptTooManyRequestError) return 'YouTube is limiting requests (too many)';
  return 'its transcript could not be read';
}
