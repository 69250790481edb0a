// The options an upload stored with its file (`files.ingest_options`, the request's fields as
// sent), read back and checked before any work starts: a bad value fails the file with its name.
import { z } from 'zod';
import { parseTimeStamp } from '../domain/chunks/input.js';
import { HttpError } from '../errors.js';
import { UnreadableFileError } from './extract/index.js';

export const chunkFields = [
  'link',
  'tag_set',
  'num_value',
  'tracking_id',
  'group_tracking_ids',
  'time_stamp',
  'lat',
  'lon',
  'image_urls',
  'weight',
  'boost_phrase',
] as const;

const schema = z
  .object({
    create_chunks: z.boolean().nullish(),
    split_delimiters: z.array(z.string()).nullish(),
    target_splits_per_chunk: z.number().int().min(0).nullish(),
    rebalance_chunks: z.boolean().nullish(),
    split_avg: z.boolean().nullish(),
    group_tracking_id: z.string().nullish(),
    webhook_url: z.string().nullish(),
    description: z.string().nullish(),
    metadata: z.unknown().optional(),
    tag_set: z.array(z.string()).nullish(),
    link: z.string().nullish(),
    time_stamp: z.string().nullish(),
    // CSV, JSONL and JSON records.
    mappings: z.array(z.object({ csv_jsonl_field: z.string(), chunk_req_payload_field: z.enum(chunkFields) })).nullish(),
    fulltext_boost_factor: z.number().nullish(),
    semantic_boost_factor: z.number().nullish(),
    upsert_by_tracking_id: z.boolean().nullish(),
  })
  .loose();

export type IngestOptions = z.infer<typeof schema>;

/** The stored options, checked; throws UnreadableFileError naming the field when one is wrong. */
export function readIngestOptions(stored: unknown): IngestOptions {
  const parsed = schema.safeParse(stored ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UnreadableFileError(`ingest option ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const options = parsed.data;
  if (options.time_stamp != null) {
    try {
      options.time_stamp = parseTimeStamp(options.time_stamp, '');
    } catch (error) {
      throw new UnreadableFileError(error instanceof HttpError ? error.message : String(error));
    }
  }
  return options;
}
