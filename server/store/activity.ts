// The service's statements on a database, as its embedded maintenance (autoAnalyze.ts,
// autoCheckpoint.ts) sees them: PGlite is one session, so maintenance holds up every request while
// it runs, and waits for a quiet moment, when no statement of the service's has run for a while.
import type { Knex } from 'knex';

export class Activity {
  private lastStatement = 0;
  /** Maintenance of its own is running: its statements are not the service's. */
  private own = 0;
  private readonly onQuery = () => {
    if (this.own === 0) this.lastStatement = Date.now();
  };

  constructor(private readonly db: Knex) {
    db.on('query', this.onQuery);
  }

  /** Whether no statement of the service's has run for `ms`. */
  quietFor(ms: number): boolean {
    return Date.now() - this.lastStatement >= ms;
  }

  /** Runs maintenance work, whose statements do not count as the service's. */
  async maintain<T>(work: () => Promise<T>): Promise<T> {
    this.own++;
    try {
      return await work();
    } finally {
      this.own--;
    }
  }

  stop(): void {
    this.db.off('query', this.onQuery);
  }
}
