// The record timestamp shapes of the interface.

/** `YYYY-MM-DD HH:MM:SS.mmm` in UTC: the shape of every record timestamp. */
export function timestamp(value: Date | string): string {
  return new Date(value).toISOString().replace('T', ' ').slice(0, 23);
}

/** `YYYY-MM-DDTHH:MM:SSZ` in UTC: the shape of crawl record timestamps. */
export function crawlTimestamp(value: Date | string): string {
  return new Date(value).toISOString().slice(0, 19) + 'Z';
}

export function nullableTimestamp(value: Date | string | null | undefined): string | null {
  return value == null ? null : timestamp(value);
}
