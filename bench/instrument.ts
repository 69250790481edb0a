// `--profile`: timers around the service's seams, installed from outside (no server code changes):
// the create-chunk handler (so HTTP, JSON, validation and auth show as the remainder), the embedder,
// the lexical index's upsert, and every SQL statement knex runs (from its query events; BEGIN and
// COMMIT do not raise them). The timers cost a little, so profiled figures are not the reported ones.
import type { Knex } from 'knex';
import { handlers } from '../server/handlers/index.js';
import { BuiltinEmbedder } from '../server/engines/embeddings/builtin.js';
import type { RunningService } from '../server/main.js';

export interface Timing {
  count: number;
  ms: number;
}

export interface ProfileSnapshot {
  handler: Timing;
  embed: Timing;
  lexicalUpsert: Timing;
  /** By statement (whitespace collapsed, cut at 100 characters). */
  sql: Record<string, Timing>;
}

type AnyFn = (...args: any[]) => Promise<any>;

export class Instrument {
  private data: ProfileSnapshot = empty();
  private readonly undo: (() => void)[] = [];
  private readonly started = new Map<string, number>();

  install(service: RunningService): this {
    const table = handlers as unknown as Record<string, AnyFn>;
    this.wrap(table, 'create_chunk', () => this.data.handler);
    this.wrap(BuiltinEmbedder.prototype as unknown as Record<string, AnyFn>, 'embed', () => this.data.embed);
    this.wrap(service.services.lexical as unknown as Record<string, AnyFn>, 'upsert', () => this.data.lexicalUpsert);

    const db = service.services.store.db as Knex & NodeJS.EventEmitter;
    const onQuery = (q: { __knexQueryUid?: string }) => {
      if (q.__knexQueryUid) this.started.set(q.__knexQueryUid, performance.now());
    };
    const onDone = (q: { __knexQueryUid?: string; sql?: string }) => {
      const t0 = q.__knexQueryUid ? this.started.get(q.__knexQueryUid) : undefined;
      if (t0 === undefined) return;
      this.started.delete(q.__knexQueryUid!);
      const key = statementKey(q.sql ?? '?');
      const t = (this.data.sql[key] ??= { count: 0, ms: 0 });
      t.count++;
      t.ms += performance.now() - t0;
    };
    const onResponse = (_response: unknown, q: { __knexQueryUid?: string; sql?: string }) => onDone(q);
    const onError = (_error: unknown, q: { __knexQueryUid?: string; sql?: string }) => onDone(q);
    db.on('query', onQuery);
    db.on('query-response', onResponse);
    db.on('query-error', onError);
    this.undo.push(() => {
      db.off('query', onQuery);
      db.off('query-response', onResponse);
      db.off('query-error', onError);
    });
    return this;
  }

  reset(): void {
    this.data = empty();
  }

  snapshot(): ProfileSnapshot {
    return structuredClone(this.data);
  }

  uninstall(): void {
    for (const undo of this.undo.splice(0).reverse()) undo();
  }

  private wrap(target: Record<string, AnyFn>, name: string, timing: () => Timing): void {
    const original = target[name];
    const own = Object.hasOwn(target, name);
    target[name] = async function (this: unknown, ...args: unknown[]) {
      const t0 = performance.now();
      try {
        return await original.apply(this, args);
      } finally {
        const t = timing();
        t.count++;
        t.ms += performance.now() - t0;
      }
    };
    this.undo.push(() => {
      if (own) target[name] = original;
      else delete target[name];
    });
  }
}

function empty(): ProfileSnapshot {
  return { handler: { count: 0, ms: 0 }, embed: { count: 0, ms: 0 }, lexicalUpsert: { count: 0, ms: 0 }, sql: {} };
}

function statementKey(sql: string): string {
  const flat = sql.replace(/\s+/g, ' ').trim();
  // `in ($1, $2, …)` lists and multi-row VALUES differ only in length: fold them.
  const folded = flat.replace(/\((?:\$\d+|\?)(?:, ?(?:\$\d+|\?))+\)/g, '(…)').replace(/(, \(…\))+/g, ', …');
  return folded.length > 100 ? folded.slice(0, 99) + '…' : folded;
}
