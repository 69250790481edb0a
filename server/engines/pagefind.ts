// Pagefind (the `pagefind` package, whose platform binary comes from the registry as an optional
// dependency) as an index writer: records in, the files of a static index out, in a folder. The
// package drives one Pagefind process per Node process; builds here take turns on it, and each
// ends by closing it, so a process that died mid-build never breaks the builds after it.
import * as pagefind from 'pagefind';

export interface PagefindRecord {
  /** Where the record leads; kept as given. */
  url: string;
  /** Its text. */
  content: string;
  /** An ISO 639-1 code; each language is an index of its own. */
  language: string;
  meta?: Record<string, string>;
  filters?: Record<string, string[]>;
  sort?: Record<string, string>;
}

let turn: Promise<unknown> = Promise.resolve();

/**
 * Writes the static index of the records, which come in batches, into `outputDir` (the folder the
 * index is served from: `pagefind.js` at its top). Returns how many records it holds.
 */
export function writePagefindIndex(batches: AsyncIterable<PagefindRecord[]>, outputDir: string): Promise<{ records: number }> {
  const mine = turn.then(() => build(batches, outputDir));
  turn = mine.catch(() => {});
  return mine;
}

async function build(batches: AsyncIterable<PagefindRecord[]>, outputDir: string): Promise<{ records: number }> {
  try {
    const { index, errors } = await pagefind.createIndex({ keepIndexUrl: true });
    if (!index) throw new PagefindError(`could not start an index: ${errors.join('; ')}`);
    let records = 0;
    for await (const batch of batches) {
      const added = await Promise.all(batch.map((record) => index.addCustomRecord(record)));
      const failed = added.find((result) => result.errors.length > 0);
      if (failed) throw new PagefindError(`could not index a record: ${failed.errors.join('; ')}`);
      records += batch.length;
    }
    const written = await index.writeFiles({ outputPath: outputDir });
    if (written.errors.length > 0) throw new PagefindError(`could not write the index: ${written.errors.join('; ')}`);
    return { records };
  } finally {
    await pagefind.close();
  }
}

export class PagefindError extends Error {
  constructor(message: string) {
    super(`Pagefind ${message}`);
    this.name = 'PagefindError';
  }
}
