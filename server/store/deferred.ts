// Rows that need not be written before the answer (search and recommendation analytics): queued,
// then inserted in batches, one statement per table, off the request's path. A failed batch is
// logged and dropped: analytics must never fail or slow the request they describe. `flush` waits
// for every queued row (tests, shutdown).
import type { Knex } from 'knex';
import type { Logger } from 'pino';

/** Rows queued past this are written at once rather than on the next turn of the event loop. */
const BATCH_ROWS = 500;

export class DeferredWriter {
  private queued = new Map<string, Record<string, unknown>[]>();
  private count = 0;
  private scheduled: NodeJS.Immediate | null = null;
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
    else this.scheduled ??= setImmediate(() => this.write());
  }

  /** Resolves once every row queued so far is written (or its failure logged). */
  async flush(): Promise<void> {
    this.write();
    while (this.writing.size) await Promise.all(this.writing);
  }

  private write(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    const batches = [...this.queued];
    this.queued = new Map();
    this.count = 0;
    for (const [table, rows] of batches) {
      const done = Promise.resolve(this.db(table).insert(rows))
        .then(() => undefined)
        .catch((error: unknown) => this.logger.error({ err: error, table, rows: rows.length }, 'deferred insert failed; rows dropped'))
        .finally(() => this.writing.delete(done));
      this.writing.add(done);
    }
  }
}
