// A chunk as a Pagefind record: its text as content, its link (or its API path) as URL, its
// metadata, id, tracking id, tags and time stamp as meta, and its tags, groups and time stamp as
// filters, so a Pagefind search can be narrowed as the service's own searches can.
import type { PagefindRecord } from '../../engines/pagefind.js';
import { innerText } from '../chunks/content.js';
import type { ChunkRow } from '../chunks/records.js';

/** The chunk's records are English, as the reference's are: one index, one stemmer. */
const LANGUAGE = 'en';

export function pagefindRecord(chunk: ChunkRow, groupIds: readonly string[] = []): PagefindRecord {
  const content = innerText(chunk.chunk_html ?? '');
  const meta: Record<string, string> = {};
  if (chunk.metadata && typeof chunk.metadata === 'object' && !Array.isArray(chunk.metadata)) {
    for (const [key, value] of Object.entries(chunk.metadata)) {
      if (value !== null && value !== undefined) meta[key] = typeof value === 'string' ? value : JSON.stringify(value);
    }
  }
  meta.chunk_id = chunk.id;
  if (chunk.tracking_id) meta.tracking_id = chunk.tracking_id;
  if (chunk.link) meta.link = chunk.link;
  const tags = (chunk.tag_set ?? []).filter((tag): tag is string => typeof tag === 'string' && tag !== '');
  if (tags.length) meta.tag_set = tags.join(', ');
  if (chunk.image_urls?.length) meta.image_urls = chunk.image_urls.join(', ');
  if (typeof meta.title !== 'string' || meta.title === '') meta.title = titleOf(chunk, content);

  const filters: Record<string, string[]> = {};
  if (tags.length) filters.tag_set = tags;
  if (groupIds.length) filters.group_ids = [...groupIds];
  const sort: Record<string, string> = {};
  if (chunk.time_stamp) {
    meta.time_stamp = chunk.time_stamp;
    filters.time_stamp = [chunk.time_stamp];
    sort.time_stamp = chunk.time_stamp;
  }
  return { url: chunk.link || `/api/chunk/${chunk.id}`, content, language: LANGUAGE, meta, filters, sort };
}

function titleOf(chunk: ChunkRow, content: string): string {
  if (chunk.link) return chunk.link;
  const start = content.trim().replace(/\s+/g, ' ');
  if (start) return start.length > 80 ? `${start.slice(0, 80)}…` : start;
  return chunk.tracking_id ?? chunk.id;
}
