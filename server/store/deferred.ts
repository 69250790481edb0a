// Rows that need not be written before the answer (search and recommendation analytics): queued,
// then inserted in batches, one statement per table, off the request's path. A batch the database
// refuses is written again row by row, so one bad row costs only itself, not the rows of every
// other dataset queued in the same window; a row refused alone, or a batch while the database is
// unreachable, is logged and dropped: analytics must never fail or slow the request they describe.
// `flush` waits for every queued row (tests, shutdown).
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { databaseFailure } from './errors.js';

/** Rows queued past this are written at once rather than after FLUSH_DELAY_MS. */
const BATCH_ROWS = 500;
/**
 * How long a queued row may wait for others to share its statement: one insert of many rows costs
 * the database little more than one of a single row (PGlite runs one statement at a time, so every
 * statement saved is time given back to searches). What a crash loses is at most this much analytics.
 */
const FLUSH_DELAY_MS = 200;

export class DeferredWriter {
  private queued = new Map<string, Record<string, unknown>[]>();
  private count = 0;
  private scheduled: NodeJS.Timeout | null = null;
  private writing = new Set<Promise<void>>();

  constructor(
    private readonly db: Knex,
    private readonly logger: Pick<Logger, 'error'>,
  ) {}

  insert(table: string, row: Record<string, unknown>): void {
    const rows = this.queued.get(table) ?? [];
    rows.push(row);
    this.queued.set(table, rows);
    // One statement per table per batch: at most BATCH_ROWS rows.
    if (++this.count >= BATCH_ROWS) this.write();
    else this.scheduled ??= setTimeout(() => this.write(), FLUSH_DELAY_MS).unref();
  }

  /** Resolves once every row queued so far is written (or its failure logged). */
  async flush(): Promise<void> {
    this.write();
    while (this.writing.size) await Promise.all(this.writing);
  }

  private write(): void {
    if (this.scheduled) clearTimeout(this.scheduled);
    this.scheduled = null;
    const batches = [...this.queued];
    this.queued = new Map();
    this.count = 0;
    for (const [table, rows] of batches) {
      const done = this.insertRows(table, rows).finally(() => this.writing.delete(done));
      this.writing.add(done);
    }
  }

  private async insertRows(table: string, rows: Record<string, unknown>[]): Promise<void> {
    try {
      await this.db(table).insert(rows);
      return;
    } catch (error) {
      if (rows.length === 1 || databaseFailure(error)?.status === 503) {
        this.logger.error({ err: error, table, rows: rows.length }, 'deferred insert failed; rows dropped');
        return;
      }
    }
    for (const row of rows) await this.insertRows(table, [row]);
  }
}
