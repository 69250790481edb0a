import type { CreateChunkHandler } from '../../generated/handlers.js';
import { notImplemented } from '../errors.js';

// Chunk creation with embedding and indexing arrives with the chunk feature.
export const create_chunk: CreateChunkHandler = async () => {
  throw notImplemented('POST /api/chunk');
};
