// The filters of the event and CTR reports checked and made concrete (date ranges: ../dateRange.ts):
// score bounds, pages, and `metadata_filter` (`path = value`) as a path and a JSON value. No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';

export const PAGE_SIZE = 10;

export interface NumberBounds {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/** The given bounds of a score range; 400 when they leave no value. */
export function numberBounds(range: T.FloatRange | null | undefined, field: string): NumberBounds | undefined {
  if (!range) return undefined;
  const bounds: NumberBounds = {};
  for (const key of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = range[key];
    if (value != null) bounds[key] = value;
  }
  const low = Math.max(bounds.gt ?? -Infinity, bounds.gte ?? -Infinity);
  const high = Math.min(bounds.lt ?? Infinity, bounds.lte ?? Infinity);
  if (low > high) throw badRequest(`${field}: the range starts (${low}) after it ends (${high})`);
  return Object.keys(bounds).length ? bounds : undefined;
}

/** The rows to skip for a page of ten; pages 0 and 1 are both the first. */
export function offsetOf(page: number | null | undefined): number {
  return (Math.max(page ?? 1, 1) - 1) * PAGE_SIZE;
}

export interface MetadataMatch {
  path: string[];
  /** The JSON value the metadata holds at `path`; null matches a missing key too. */
  value: unknown;
}

/** `path = value`: a dotted path into the event metadata and a JSON value (single quotes read as double). */
export function metadataMatch(filter: string, field: string): MetadataMatch {
  const at = filter.indexOf('=');
  const path = at < 0 ? '' : filter.slice(0, at).trim();
  const text =
    at < 0
      ? ''
      : filter
          .slice(at + 1)
          .trim()
          .replace(/'/g, '"');
  if (!path || !text || path.split('.').some((part) => part === '')) {
    throw badRequest(`${field}: ${JSON.stringify(filter)} is not \`path = value\` (e.g. component_props.componentName = 'cart')`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`${field}: the value ${JSON.stringify(text)} is not JSON (a quoted string, a number, true, false or null)`);
  }
  if (typeof value === 'object' && value !== null) throw badRequest(`${field}: the value must be a string, a number, true, false or null`);
  return { path: path.split('.'), value };
}
