// PGlite runs no autovacuum, so tables written through the service were never analyzed and the
// planner guessed their sizes: at 100,000 chunks it picked plans many times slower, and with one
// connection a slow statement holds up every other. This does autovacuum's analyze in embedded
// mode, with its rule: a table is analyzed once the rows changed since its last analyze exceed 50
// plus 10 % of its rows.
//
// Unlike autovacuum's, this ANALYZE holds up every other statement: PGlite is one session. At
// 100,000 chunks, analyzing `chunks` or `bm25_postings` takes 0.3-1.1 s (reading its sample of
// 30,000 rows), during which every request waits. So a due table waits for a quiet moment (no
// statement of the service's for a second), and is analyzed anyway once it has waited ten minutes:
// busy hours keep their latency, and statistics are never stale for long.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Activity } from './activity.js';

/** autovacuum_analyze_threshold and autovacuum_analyze_scale_factor, PostgreSQL's defaults. */
const THRESHOLD = 50;
const SCALE_FACTOR = 0.1;

export interface AnalyzeTiming {
  /** How often the timer looks for a quiet moment. */
  checkEveryMs: number;
  /** While the database is busy, how often it asks which tables are due. */
  busyCheckEveryMs: number;
  /** No statement for this long is a quiet moment. */
  quietMs: number;
  /** A due table waits for a quiet moment at most this long. */
  mostDeferredMs: number;
}

const TIMING: AnalyzeTiming = { checkEveryMs: 5_000, busyCheckEveryMs: 30_000, quietMs: 1_000, mostDeferredMs: 10 * 60_000 };

export interface AutoAnalyze {
  /** Analyzes the tables that need it now, quiet or not (the timer does it at quiet moments). */
  run(): Promise<string[]>;
  stop(): Promise<void>;
}

export function startAutoAnalyze(db: Knex, activity: Activity, logger: Pick<Logger, 'warn'> | null, timing: AnalyzeTiming = TIMING): AutoAnalyze {
  let running: Promise<string[]> | null = null;
  let lastBusyCheck = Date.now();
  /** When a table was first found due while the database was busy (null: none waiting). */
  let dueSince: number | null = null;

  const run = () => {
    running ??= activity
      .maintain(async () => {
        const tables = await due(db);
        for (const table of tables) await db.raw('analyze ??', [table]);
        dueSince = null;
        return tables;
      })
      .finally(() => {
        running = null;
      });
    return running;
  };
  const tick = async () => {
    if (running) return;
    if (activity.quietFor(timing.quietMs)) {
      await run();
      return;
    }
    const now = Date.now();
    if (now - lastBusyCheck < timing.busyCheckEveryMs) return;
    lastBusyCheck = now;
    if ((await activity.maintain(() => due(db))).length === 0) return;
    dueSince ??= now;
    if (now - dueSince >= timing.mostDeferredMs) await run();
  };
  const timer = setInterval(() => {
    tick().catch((error: unknown) => logger?.warn({ err: error }, 'analyzing the embedded database failed'));
  }, timing.checkEveryMs);
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
