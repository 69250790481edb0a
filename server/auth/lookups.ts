// The lookups every request makes before its handler (the caller behind an API key, the dataset
// `SVC-Dataset` names), remembered for a moment: they are a large share of a fast search's time.
// Any write this process sends to the tables they read forgets them all at once (again when its
// transaction commits, in case a lookup read the old rows in between); TTL_MS bounds how long a
// write made by another process can go unseen.
import type { Knex } from 'knex';

const TTL_MS = 2000;
/** Entries kept at most (the oldest go first); a bound on memory under many distinct keys. */
const MAX_ENTRIES = 10_000;
const WATCHED_TABLE = /\b(api_keys|user_organizations|organizations|datasets|users)\b/i;
const WRITE = /\b(insert\s+into|update|delete\s+from|truncate)\b/i;

interface Entry {
  value: unknown;
  until: number;
}

class Lookups {
  private entries = new Map<string, Entry>();
  private clearOnCommit = false;

  constructor(db: Knex) {
    db.on('query', ({ sql }: { sql: string }) => {
      if (/^\s*commit\b/i.test(sql)) {
        if (this.clearOnCommit) this.entries.clear();
        this.clearOnCommit = false;
      } else if (WRITE.test(sql) && WATCHED_TABLE.test(sql)) {
        this.entries.clear();
        this.clearOnCommit = true;
      }
    });
  }

  async get<V>(key: string, load: () => Promise<V>, until: (value: V) => number): Promise<V> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.value as V;
    // Frozen: one object now serves many requests, and none may change it for the others.
    const value = Object.freeze(await load());
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: Math.min(now + TTL_MS, until(value)) });
    return value;
  }
}

const byDatabase = new WeakMap<Knex, Lookups>();

/**
 * `load()`'s value for `key` as remembered from the last TTL_MS, unless a write intervened; never
 * past `until(value)` (epoch ms). Failures are not remembered.
 */
export function remembered<V>(db: Knex, key: string, load: () => Promise<V>, until: (value: V) => number = () => Infinity): Promise<V> {
  let lookups = byDatabase.get(db);
  if (!lookups) byDatabase.set(db, (lookups = new Lookups(db)));
  return lookups.get(key, load, until);
}
