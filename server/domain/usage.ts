// What an organization uses, counted live: the quantities its plan limits. Metered counters of
// features the service does not offer yet (search and token metering, OCR, crawl pages, analytics
// events) are 0 until those features record them.
import type { Knex } from 'knex';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { badRequest } from '../errors.js';
import { countChunks, countDatasets, countMessages, countMessagesSince, countUsers, startOfMonth, sumFileBytes } from './quotas.js';

export async function organizationUsage(
  db: Knex,
  organizationId: string,
  request: T.GetOrganizationUsageReqPayload | undefined,
): Promise<T.ExtendedOrganizationUsageCount> {
  checkDateRange(request?.date_range);
  const [dataset_count, user_count, chunk_count, file_storage, message_count, current_months_message_count] = await Promise.all([
    countDatasets(db, organizationId),
    countUsers(db, organizationId),
    countChunks(db, organizationId),
    sumFileBytes(db, organizationId),
    countMessages(db, organizationId),
    countMessagesSince(db, organizationId, startOfMonth(new Date())),
  ]);
  return {
    dataset_count,
    user_count,
    chunk_count,
    file_storage,
    message_count,
    current_months_message_count,
    search_count: 0,
    search_tokens: 0,
    message_tokens: 0,
    bytes_ingested: 0,
    tokens_ingested: 0,
    ocr_pages_ingested: 0,
    website_pages_scraped: 0,
    events_ingested: 0,
  };
}

/** The bounds must be instants (`YYYY-MM-DD HH:MM:SS.mmm` or a prefix of it, or ISO 8601). */
function checkDateRange(range: T.DateRange | null | undefined): void {
  if (!range) return;
  for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = range[bound];
    if (value == null) continue;
    const text = value.trim().replace(' ', 'T');
    const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(text);
    const ok = /^\d{4}-\d{2}-\d{2}/.test(text) && !Number.isNaN(new Date(hasZone ? text : `${text}${text.length > 10 ? 'Z' : ''}`).getTime());
    if (!ok) throw badRequest(`date_range.${bound}: ${value} is not a date and time like 2026-01-31 12:00:00.000`);
  }
}
