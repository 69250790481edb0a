// Which URLs a crawl visits: the start origin's (unless external links are allowed), with paths
// that pass includePaths and excludePaths, as the reference's crawl options define them.
import type { WebsiteCrawlOptions } from './types.js';

export class CrawlScope {
  private readonly origin: string;
  private readonly include: RegExp[];
  private readonly exclude: RegExp[];

  constructor(
    start: string,
    private readonly options: Pick<WebsiteCrawlOptions, 'allowExternalLinks' | 'includePaths' | 'excludePaths'>,
  ) {
    this.origin = new URL(start).origin;
    this.include = (options.includePaths ?? []).map(pattern('includePaths'));
    this.exclude = (options.excludePaths ?? []).map(pattern('excludePaths'));
  }

  /** The URL's site may be visited. */
  reaches(url: string): boolean {
    return this.options.allowExternalLinks || new URL(url).origin === this.origin;
  }

  /** Why the URL's path is left out, or null when it is in. */
  pathRefusal(url: string): string | null {
    const { pathname } = new URL(url);
    if (this.include.length && !this.include.some((r) => r.test(pathname))) return 'the path matches no includePaths';
    if (this.exclude.some((r) => r.test(pathname))) return 'the path matches excludePaths';
    return null;
  }
}

const pattern = (option: string) => (source: string) => {
  try {
    return new RegExp(source);
  } catch {
    throw new TypeError(`${option}: ${source} is not a regular expression`);
  }
};
