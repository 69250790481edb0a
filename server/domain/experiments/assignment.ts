// Which treatment of an A/B experiment a user gets: a function of the experiment id and the user
// id alone, so that the same user always lands in the same treatment and, over many users, each
// treatment gets its share. No I/O here.
import { createHash } from 'node:crypto';

export interface Split {
  control_name: string;
  control_split: number;
  t1_name: string;
  t1_split: number;
}

/** 2^48: the hash's first 6 bytes, read as an integer, divided by this lie in [0, 1). */
const SCALE = 2 ** 48;

/** The user's place in [0, 1) for the experiment: the SHA-256 of both ids, read as a fraction. */
export function bucket(experimentId: string, userId: string): number {
  // The experiment id is a uuid (fixed length, no ':'), so no two pairs of ids hash the same text.
  const digest = createHash('sha256').update(`${experimentId}:${userId}`, 'utf8').digest();
  return digest.readUIntBE(0, 6) / SCALE;
}

/**
 * The treatment for a place in [0, 1): the control's share comes first, `t1`'s after it. The shares
 * are taken relative to their sum, so a treatment with share 0 is never chosen even when the sum
 * is a rounding away from 1.
 */
export function treatmentAt(place: number, split: Split): string {
  const total = split.control_split + split.t1_split;
  return place < split.control_split / total ? split.control_name : split.t1_name;
}

/** The treatment a user gets in an experiment. */
export function assignTreatment(experimentId: string, userId: string, split: Split): string {
  return treatmentAt(bucket(experimentId, userId), split);
}
