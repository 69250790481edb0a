// The crash guarantee of crawls: the service (with its in-process runner, or its Temporal worker) is
// killed with SIGKILL in the middle of a crawl, started again on the same database, and finishes the
// crawl with every page stored once. The site is served by this test, so it outlives the kill.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { openStore } from '../../server/store/db.js';
import { exited, startChild } from '../support/child.js';
import { mode, testEnvironment } from '../support/env.js';

const PAGES = 120;
/** Each page answers this late, so the crawl is still going when the first life is killed. */
const PAGE_DELAY_MS = 40;
/** Kill once this many chunks are stored (pages are stored a second's worth at a time). */
const KILL_AT = 15;

interface Line {
  started?: { datasetId: string; crawlId: string };
  chunks?: number;
  status?: unknown;
  ms?: number;
}

let server: http.Server;
let siteUrl: string;

/** Page i has two sections and links to the next page. */
function page(i: number): string {
  const next = i + 1 < PAGES ? `<a href="/page/${i + 1}">next</a>` : '';
  return `<html><head><title>Page ${i}</title></head><body><h1>Page ${i}</h1><p>Kestrels of page ${i}.</p><h2>More ${i}</h2><p>Falcons of page ${i}.</p>${next}</body></html>`;
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const match = /^\/page\/(\d+)$/.exec(req.url ?? '');
    const i = req.url === '/' ? 0 : match ? Number(match[1]) : -1;
    if (i < 0 || i >= PAGES) return void res.writeHead(404).end();
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(page(i)), PAGE_DELAY_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://localhost:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe(`a crawl survives a crash (${mode})`, () => {
  it('a service killed mid-crawl and started again finishes the crawl, every page stored once', async () => {
    const env = await testEnvironment({ LOG_LEVEL: 'warn', OUTBOUND_ALLOW_PRIVATE: 'localhost' });

    const first = startChild('test/engines/crawl-crash.service.ts', { ...env, CRASH_SETUP: '1', CRASH_SITE_URL: siteUrl });
    let ids: { datasetId: string; crawlId: string } | undefined;
    let atKill: Line | undefined;
    for await (const raw of first.lines) {
      const line = JSON.parse(raw) as Line;
      if (line.started) ids = line.started;
      if (line.chunks !== undefined && line.chunks >= KILL_AT) {
        first.child.kill('SIGKILL');
        atKill = line;
        break;
      }
    }
    await exited(first.child);
    expect(ids, first.stderr()).toBeDefined();
    expect(atKill, first.stderr()).toBeDefined();
    expect(atKill!.status).toEqual({ Processing: expect.any(Number) });
    expect(atKill!.chunks).toBeLessThan(2 * PAGES);

    const second = startChild('test/engines/crawl-crash.service.ts', { ...env, CRASH_DATASET_ID: ids!.datasetId, CRASH_CRAWL_ID: ids!.crawlId });
    const seen: Line[] = [];
    for await (const raw of second.lines) seen.push(JSON.parse(raw));
    expect(await exited(second.child), second.stderr()).toBe(0);
    expect(seen[0].chunks!).toBeGreaterThanOrEqual(atKill!.chunks!);
    expect(seen.at(-1)).toMatchObject({ chunks: 2 * PAGES, status: 'Completed' });
    console.info(`killed at ${atKill!.chunks} of ${2 * PAGES} chunks; the restarted service found ${seen[0].chunks} and finished in ${seen.at(-1)!.ms} ms`);

    const config = loadConfig(env);
    const store = await openStore(config.store);
    try {
      const db = store.db;
      const rows: { chunk_html: string; link: string; tracking_id: string }[] = await db('chunks')
        .where({ dataset_id: ids!.datasetId })
        .select('chunk_html', 'link', 'tracking_id');
      expect(rows).toHaveLength(2 * PAGES);
      expect(new Set(rows.map((r) => r.chunk_html)).size).toBe(2 * PAGES);
      expect(new Set(rows.map((r) => r.link)).size).toBe(PAGES);
      expect(await db('crawl_pages').where({ crawl_id: ids!.crawlId })).toHaveLength(PAGES);
      const events = await db('events').where({ dataset_id: ids!.datasetId });
      expect(events.map((e) => e.event_type)).toEqual(['crawl_completed']);
    } finally {
      await store.close();
    }
  }, 240_000);
});
