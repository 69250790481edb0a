// One chunk per record (CSV row, JSONL line, JSON array item), as the reference's CSV/JSONL upload
// makes them: the record (nulls dropped) as JSON is the chunk's text, the record is its metadata,
// and the upload's field mappings fill the chunk's other fields from the record's fields.
import type * as T from '../../sdk/src/generated/types.gen.js';
import { parseTimeStamp } from '../domain/chunks/input.js';
import type { Row } from './extract/index.js';
import type { IngestOptions } from './options.js';

export type ChunkPiece = Omit<T.ChunkReqPayload, 'group_ids'>;

export function recordPiece(record: Row, options: IngestOptions): ChunkPiece {
  const fields = isObject(record) ? record : {};
  const cleaned = isObject(record) ? Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null && v !== undefined)) : record;
  const fileMetadata = isObject(options.metadata) ? options.metadata : null;
  const piece: ChunkPiece = {
    chunk_html: JSON.stringify(cleaned),
    metadata: fileMetadata && isObject(record) ? { ...fileMetadata, ...record } : record,
    upsert_by_tracking_id: options.upsert_by_tracking_id ?? true,
    link: options.link ?? null,
    tag_set: options.tag_set?.length ? [...options.tag_set] : null,
    time_stamp: options.time_stamp ?? null,
  };
  const boostPhrase: string[] = [];
  let lat: number | null = null;
  let lon: number | null = null;
  for (const { csv_jsonl_field: field, chunk_req_payload_field: target } of options.mappings ?? []) {
    const value = fields[field];
    if (value === undefined || value === null) continue;
    switch (target) {
      case 'link':
        if (typeof value === 'string') piece.link = value;
        break;
      case 'tag_set':
        piece.tag_set = [...(piece.tag_set ?? []), ...stringList(value)];
        break;
      case 'group_tracking_ids':
        piece.group_tracking_ids = [...(piece.group_tracking_ids ?? []), ...stringList(value)];
        break;
      case 'image_urls':
        piece.image_urls = [...(piece.image_urls ?? []), ...stringList(value)];
        break;
      case 'num_value':
        if (typeof value === 'number') piece.num_value = value;
        break;
      case 'weight':
        if (typeof value === 'number') piece.weight = value;
        break;
      case 'lat':
        if (typeof value === 'number') lat = value;
        break;
      case 'lon':
        if (typeof value === 'number') lon = value;
        break;
      case 'tracking_id':
        piece.tracking_id = typeof value === 'string' ? value : JSON.stringify(value);
        break;
      case 'time_stamp':
        piece.time_stamp = timeStampOf(value) ?? piece.time_stamp;
        break;
      case 'boost_phrase':
        if (typeof value === 'string') boostPhrase.push(value);
        break;
    }
  }
  const phrase = boostPhrase.join(' ').trim();
  if (phrase && options.fulltext_boost_factor != null) piece.fulltext_boost = { phrase, boost_factor: options.fulltext_boost_factor };
  if (phrase && options.semantic_boost_factor != null) piece.semantic_boost = { phrase, distance_factor: options.semantic_boost_factor };
  if (lat !== null && lon !== null) piece.location = { lat, lon };
  return piece;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A list from an array of strings, a "[a, b]" string (CSV cells) or a single string. */
function stringList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value !== 'string') return [];
  const text = value.trim();
  if (text.startsWith('[') && text.endsWith(']')) {
    return text
      .slice(1, -1)
      .split(',')
      .map((v) => v.trim().replace(/^["']|["']$/g, ''))
      .filter(Boolean);
  }
  return [value];
}

/** A record's date: ISO 8601 text, or a number of seconds since 1970; anything else is ignored. */
function timeStampOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const date = new Date(value * 1000);
    return Number.isNaN(date.getTime()) ? null : date.toISOString().replace('T', ' ').replace('Z', '');
  }
  if (typeof value !== 'string') return null;
  try {
    return parseTimeStamp(value, '');
  } catch {
    return null;
  }
}
