// The pieces of a file, in order: each becomes one chunk. A text document is split by the upload's
// options (or, with split_avg, kept whole as one chunk whose vector averages its parts); a record
// file gives one piece per record.
import type { ExtractedDocument } from './extract/index.js';
import { UnreadableFileError } from './extract/index.js';
import type { IngestOptions } from './options.js';
import { recordPiece, type ChunkPiece } from './records.js';
import { chunkTexts, DEFAULT_TARGET_SPLITS } from './split.js';

/** With split_avg the whole text is one chunk; beyond this many characters that is refused. */
export const MAX_SPLIT_AVG_CHARS = 2_000_000;

export async function* filePieces(document: ExtractedDocument, options: IngestOptions): AsyncGenerator<ChunkPiece> {
  if (document.shape === 'rows') {
    for await (const record of document.rows()) yield recordPiece(record, options);
    return;
  }
  const common: ChunkPiece = {
    link: options.link ?? null,
    tag_set: options.tag_set?.length ? options.tag_set : null,
    metadata: options.metadata ?? null,
    time_stamp: options.time_stamp ?? null,
  };
  if (options.split_avg) {
    const text = await wholeText(document.text());
    if (text.trim()) yield { ...common, chunk_html: text, split_avg: true, tracking_id: options.group_tracking_id ?? null };
    return;
  }
  let position = 0;
  const texts = chunkTexts(document.text, {
    delimiters: options.split_delimiters,
    // The reference's minimum is 0, which would make no groups at all: taken as 1.
    targetSplitsPerChunk: Math.max(1, options.target_splits_per_chunk ?? DEFAULT_TARGET_SPLITS),
    rebalance: options.rebalance_chunks ?? true,
  });
  for await (const text of texts) {
    const trackingId = options.group_tracking_id ? `${options.group_tracking_id}|${position}` : null;
    position++;
    yield { ...common, chunk_html: text, tracking_id: trackingId };
  }
}

async function wholeText(segments: AsyncIterable<string>): Promise<string> {
  const parts: string[] = [];
  let length = 0;
  for await (const segment of segments) {
    length += segment.length;
    if (length > MAX_SPLIT_AVG_CHARS) {
      throw new UnreadableFileError(`split_avg makes one chunk of the whole file, and this file has more than ${MAX_SPLIT_AVG_CHARS} characters of text`);
    }
    parts.push(segment);
  }
  return parts.join('');
}
