// Checks and normalises the fields of a chunk write that the contract cannot express.
import { badRequest } from '../../errors.js';

/**
 * `time_stamp` is ISO 8601 without a zone; a value with a zone is converted to UTC. Returns the
 * database's zone-less form, or null.
 */
export function parseTimeStamp(value: string | null | undefined, where: string): string | null {
  if (value == null) return null;
  const text = value.trim().replace(' ', 'T');
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  const date = new Date(hasZone ? text : /T/.test(text) ? `${text}Z` : `${text}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    throw badRequest(`${where}time_stamp: ${value} is not an ISO 8601 date and time`);
  }
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/** Finite numbers only: JSON has no NaN, but a weight of 1e400 parses as Infinity. */
export function finite(value: number | null | undefined, field: string): number | null {
  if (value == null) return null;
  if (!Number.isFinite(value)) throw badRequest(`${field}: must be a finite number`);
  return value;
}
