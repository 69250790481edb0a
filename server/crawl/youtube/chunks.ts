// A video's transcript as chunks, grouped as Trieve groups it: caption segments are added to a chunk
// while it holds at most 200 words (a longer segment is a chunk of its own), each chunk starting
// where its first segment starts. A chunk links to the video at that second (`&t=`), is headed by
// the video's title, and has a tracking id made from the video and its place, so the next crawl
// of the video updates it in place.
import { textContent } from 'domutils';
import { parseDocument } from 'htmlparser2';
import { nameBasedUuid } from '../../ingest/ids.js';
import type { SourceChunk, SourcePage } from '../types.js';
import type { Video } from './api.js';
import type { Segment } from './transcript.js';

/** Words a chunk holds at most, unless one segment alone has more (Trieve's bound). */
export const CHUNK_WORDS = 200;

export const videoUrl = (videoId: string) => `https://www.youtube.com/watch?v=${encodeURIComponent(videoId)}`;

/** The same video and position always give the same id. */
export const youtubeChunkId = (videoId: string, position: number) => nameBasedUuid(`youtube-chunk:${videoId}:${position}`);

export interface TimedText {
  /** Seconds from the start of the video. */
  start: number;
  text: string;
}

/** The segments' text in chunks of at most CHUNK_WORDS words, each with the start of its first segment. */
export function groupSegments(segments: readonly Segment[]): TimedText[] {
  const groups: TimedText[] = [];
  let current: { start: number; parts: string[]; words: number } | null = null;
  for (const segment of segments) {
    const text = plainText(segment.text);
    if (!text) continue;
    const words = text.split(' ').length;
    if (current && current.words + words > CHUNK_WORDS) {
      groups.push({ start: current.start, text: current.parts.join(' ') });
      current = null;
    }
    current ??= { start: Number.isFinite(segment.offset) && segment.offset > 0 ? segment.offset : 0, parts: [], words: 0 };
    current.parts.push(text);
    current.words += words;
  }
  if (current) groups.push({ start: current.start, text: current.parts.join(' ') });
  return groups;
}

/** The video as a page: a chunk per group of its transcript. */
export function videoPage(video: Video, segments: readonly Segment[]): SourcePage {
  const url = videoUrl(video.id);
  const title = video.title.trim();
  const publishedAt = isoTime(video.publishedAt);
  const chunks = groupSegments(segments).map(
    ({ start, text }, position): SourceChunk => ({
      trackingId: youtubeChunkId(video.id, position),
      html: `${title ? `<h1>${escapeHtml(title)}</h1>` : ''}<p>${escapeHtml(text)}</p>`,
      headings: title ? [title] : [],
      link: `${url}&t=${Math.floor(start)}`,
      imageUrls: video.thumbnailUrl ? [video.thumbnailUrl] : undefined,
      timeStamp: publishedAt,
      metadata: { description: video.description, yt_preview_src: video.thumbnailUrl, start_seconds: Math.floor(start) },
    }),
  );
  return { url, title: title || null, chunks };
}

/**
 * A caption as plain text on one line: YouTube's timed text escapes some characters twice
 * (`&amp;#39;`), and may carry markup (`<font>`), so what the library decoded once is read as HTML.
 */
function plainText(caption: string): string {
  return textContent(parseDocument(caption)).replace(/\s+/g, ' ').trim();
}

/** An ISO 8601 time as the chunk write path takes it, or undefined when there is none. */
function isoTime(value: string | null): string | undefined {
  if (!value) return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
