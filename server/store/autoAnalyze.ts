// PGlite runs no autovacuum, so tables written through the service were never analyzed and the
// planner guessed their sizes: at 100,000 chunks it picked plans many times slower, and with one
// connection a slow statement holds up every other. This does autovacuum's analyze in embedded
// mode, with its rule: a table is analyzed once the rows changed since its last analyze exceed 50
// plus 10 % of its rows. ANALYZE reads a bounded sample, so each costs well under a second.
import type { Knex } from 'knex';
import type { Logger } from 'pino';

const CHECK_EVERY_MS = 30_000;
/** autovacuum_analyze_threshold and autovacuum_analyze_scale_factor, PostgreSQL's defaults. */
const THRESHOLD = 50;
const SCALE_FACTOR = 0.1;

export interface AutoAnalyze {
  /** Analyzes the tables that need it now (the timer does this every CHECK_EVERY_MS). */
  run(): Promise<string[]>;
  stop(): Promise<void>;
}

export function startAutoAnalyze(db: Knex, logger: Pick<Logger, 'warn'> | null): AutoAnalyze {
  let running: Promise<string[]> | null = null;
  const run = () => {
    running ??= due(db)
      .then(async (tables) => {
        for (const table of tables) await db.raw('analyze ??', [table]);
        return tables;
      })
      .finally(() => {
        running = null;
      });
    return running;
  };
  const timer = setInterval(() => {
    run().catch((error: unknown) => logger?.warn({ err: error }, 'analyzing the embedded database failed'));
  }, CHECK_EVERY_MS);
  timer.unref();
  return {
    run,
    stop: async () => {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}

/** The tables whose changed rows since their last analyze pass autovacuum's threshold. */
async function due(db: Knex): Promise<string[]> {
  // The statistics of the session's own writes reach the views at its next report: force it.
  await db.raw('select pg_stat_force_next_flush()');
  const { rows } = await db.raw<{ rows: { relname: string }[] }>(
    `select s.relname from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.n_mod_since_analyze > ? + ? * greatest(c.reltuples, 0)
      order by s.relname`,
    [THRESHOLD, SCALE_FACTOR],
  );
  return rows.map((r) => r.relname);
}
