// The staged pieces of a file (table ingest_pieces): written in order by the splitting step,
// read back a range at a time by the chunk-creating steps, dropped when the ingestion ends.
import type { Knex } from 'knex';
import { yieldToEventLoop } from './yield.js';
import type { ChunkPiece } from './records.js';

/** Pieces written per statement; a piece is at most a few tens of kilobytes. */
const INSERT_BATCH = 200;

export interface StagedPiece {
  position: number;
  payload: ChunkPiece;
}

/**
 * Replaces the file's staged pieces with `pieces`, numbered from 0; returns how many. `progress`
 * is called after each statement (the caller heartbeats there).
 */
export async function stagePieces(db: Knex, fileId: string, pieces: AsyncIterable<ChunkPiece>, progress: (staged: number) => void = () => {}): Promise<number> {
  await dropPieces(db, fileId);
  let position = 0;
  let batch: { file_id: string; position: number; payload: string }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await db('ingest_pieces').insert(batch).onConflict(['file_id', 'position']).merge(['payload']);
    batch = [];
    progress(position);
    await yieldToEventLoop();
  };
  for await (const piece of pieces) {
    batch.push({ file_id: fileId, position, payload: JSON.stringify(piece, stripNul) });
    position++;
    if (batch.length >= INSERT_BATCH) await flush();
  }
  await flush();
  return position;
}

export async function readPieces(db: Knex, fileId: string, from: number, count: number): Promise<StagedPiece[]> {
  return db('ingest_pieces')
    .where('file_id', fileId)
    .where('position', '>=', from)
    .where('position', '<', from + count)
    .orderBy('position')
    .select('position', 'payload');
}

export async function stagedCount(db: Knex, fileId: string): Promise<number> {
  const [{ count }] = await db('ingest_pieces').where('file_id', fileId).count<{ count: string }[]>('* as count');
  return Number(count);
}

export async function dropPieces(db: Knex, fileId: string): Promise<void> {
  await db('ingest_pieces').where('file_id', fileId).del();
}

/** PostgreSQL's text and jsonb refuse U+0000, which binary-ish text files can contain. */
function stripNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.includes('\u0000') ? value.replace(/\u0000/g, '') : value;
}
