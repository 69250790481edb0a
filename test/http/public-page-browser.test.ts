// The public page in a real browser (headless Chromium): it loads with the dataset's branding, finds
// chunks as the reader types with the matching words marked, narrows them by tag, shows a chunk on
// a click (its HTML made harmless), and answers in the chat from the chunks a question finds. How
// long the page takes to load is printed (and kept in the note of the change that made it).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createOrganization, updateDataset } from '../../sdk/src/generated/sdk.gen.js';
import { chromiumPath, checkPageResponses, launchBrowser, noBrowserMessage } from '../support/browser.js';
import { type LlmStandIn, startLlmStandIn } from '../support/llmStandIn.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let standIn: LlmStandIn;
let browser: Browser;
let page: Page;
let responses: { settle(): Promise<void> };
let datasetId: string;
let pageUrl: string;

if (!chromiumPath) console.warn(noBrowserMessage);

async function addChunk(body: Record<string, unknown>): Promise<void> {
  const { response, error } = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': datasetId }, body: body as any });
  expect(response.status, JSON.stringify(error)).toBe(200);
}

/** Milliseconds from asking for the page until its script is ready, and the browser's own timings. */
async function load(): Promise<{ readyMs: number; domContentLoadedMs: number; loadMs: number }> {
  const started = performance.now();
  await page.goto(pageUrl);
  await page.waitForSelector('body[data-ready="true"]');
  const readyMs = performance.now() - started;
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    return { domContentLoadedMs: nav.domContentLoadedEventEnd, loadMs: nav.loadEventEnd };
  });
  return { readyMs: Math.round(readyMs), domContentLoadedMs: Math.round(timing.domContentLoadedMs), loadMs: Math.round(timing.loadMs) };
}

const resultTitles = () => page.locator('#results .result .title').allTextContents();

describe.skipIf(!chromiumPath)('the public page in a browser', () => {
  beforeAll(async () => {
    standIn = await startLlmStandIn();
    service = await startTestService({ LLM_BASE_URL: standIn.url, LLM_API_KEY: 'instance-llm-key', LLM_DEFAULT_MODEL: 'stand-in-model' });
    const orgId = (await createOrganization({ client: service.client(), body: { name: 'Acme' } })).data!.id;
    datasetId = (await service.newDataset(orgId, 'Glaciers')).id;
    await addChunk({
      chunk_html: '<p>The Aletsch glacier is the longest glacier of the Alps, about 20 km long.</p>',
      tag_set: ['ice', 'alps'],
      link: 'https://example.com/aletsch',
      metadata: { title: 'Aletsch glacier' },
    });
    await addChunk({
      chunk_html: '<p>The Rhone glacier feeds Lake Geneva. <img src="x" onerror="window.__xss = 1"><script>window.__xss = 2</script></p>',
      tag_set: ['ice'],
      metadata: { title: 'Rhone glacier' },
    });
    await addChunk({ chunk_html: '<p>The Sahara is the largest hot desert.</p>', tag_set: ['sand'], metadata: { title: 'Sahara' } });
    const { response } = await updateDataset({
      client: service.client(),
      headers: { 'SVC-Organization': orgId },
      body: {
        dataset_id: datasetId,
        server_configuration: {
          PUBLIC_DATASET: {
            enabled: true,
            extra_params: { brandName: 'Ice Atlas', brandColor: '#7c3aed', placeholder: 'Search the ice', headingPrefix: 'Search', debounceMs: 100 },
          },
        },
      },
    });
    expect(response.status).toBe(200);
    pageUrl = `${service.url}/api/public_page/${datasetId}`;
    browser = await launchBrowser();
    page = await browser.newPage();
    responses = checkPageResponses(page, service.url);
  });

  afterAll(async () => {
    await responses?.settle();
    await browser?.close();
    await service?.stop();
    await standIn?.close();
  });

  it('loads with the dataset’s branding', async () => {
    const first = await load();
    const again = await load();
    console.log(`public page load, first (script bundled): ${JSON.stringify(first)}; again: ${JSON.stringify(again)}`);
    expect(again.readyMs).toBeLessThan(5000);
    await expect(page.title()).resolves.toBe('Search Ice Atlas');
    expect(await page.locator('#heading').textContent()).toBe('Search Ice Atlas');
    expect(await page.locator('#query').getAttribute('placeholder')).toBe('Search the ice');
    expect(await page.locator('header').evaluate((h) => getComputedStyle(h).backgroundColor)).toBe('rgb(124, 58, 237)');
    // Without tags among its options, the page offers the dataset's most used ones.
    expect((await page.locator('#tags .tag').allTextContents()).sort()).toEqual(['alps', 'ice', 'sand']);
    await responses.settle();
  });

  it('finds chunks as the reader types, the matching words marked', async () => {
    const started = performance.now();
    await page.locator('#query').pressSequentially('glacier', { delay: 30 });
    // Results of a prefix typed on the way ('glac') may show first; the word's own are awaited.
    await page.waitForSelector('#results[data-query="glacier"]');
    console.log(`public page: results ${Math.round(performance.now() - started)} ms after the first key stroke`);
    expect((await resultTitles()).sort()).toEqual(['Aletsch glacier', 'Rhone glacier']);
    const marks = await page.locator('#results .result mark').allTextContents();
    expect(marks.length).toBeGreaterThan(0);
    for (const mark of marks) expect(mark.toLowerCase()).toBe('glacier');
    await responses.settle();
  });

  it('narrows the results by tag', async () => {
    await page.locator('#tags .tag', { hasText: 'alps' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#results .result').length === 1);
    expect(await resultTitles()).toEqual(['Aletsch glacier']);
    await page.locator('#tags .tag', { hasText: 'alps' }).click();
    await page.locator('#tags .tag', { hasText: 'sand' }).click();
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'No results.');
    await page.locator('#tags .tag', { hasText: 'sand' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#results .result').length === 2);
  });

  it('shows a chunk on a click, with its link, and runs none of its scripts', async () => {
    await page.locator('#results .result', { hasText: 'Aletsch glacier' }).click();
    const dialog = page.locator('dialog#chunk');
    await expect(dialog.evaluate((d: HTMLDialogElement) => d.open)).resolves.toBe(true);
    expect(await page.locator('#chunk-title').textContent()).toBe('Aletsch glacier');
    expect(await page.locator('#chunk-body').textContent()).toContain('about 20 km long');
    expect(await page.locator('#chunk-body mark').first().textContent()).toBe('glacier');
    expect(await page.locator('#chunk-link').getAttribute('href')).toBe('https://example.com/aletsch');
    await page.locator('#chunk-close').click();

    await page.locator('#results .result', { hasText: 'Rhone glacier' }).click();
    expect(await page.locator('#chunk-body').textContent()).toContain('feeds Lake Geneva');
    expect(await page.locator('#chunk-body img, #chunk-body script').count()).toBe(0);
    expect(await page.locator('#chunk-link').isHidden()).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    await page.locator('#chunk-close').click();
  });

  it('answers in the chat from the chunks the question finds', async () => {
    standIn.next = [{ kind: 'answer', text: 'The Aletsch glacier is about 20 km long.' }];
    await page.locator('#chat-input').fill('How long is the Aletsch glacier?');
    await page.locator('#chat-form button').click();
    await page.waitForFunction(() => !document.querySelector('#chat-log .message.assistant.pending'));
    expect(await page.locator('#chat-log .message.assistant').first().innerText()).toContain('The Aletsch glacier is about 20 km long.');
    const asked = standIn.received.at(-1)!;
    expect(JSON.stringify(asked.body.messages)).toContain('The Aletsch glacier is the longest glacier of the Alps');
    expect(await page.locator('#chat-log .sources li').count()).toBeGreaterThan(0);

    // A refusal of the service is shown as its message.
    standIn.next = [{ kind: 'status', status: 400 }];
    await page.locator('#chat-input').fill('And the Rhone glacier?');
    await page.locator('#chat-form button').click();
    await page.waitForSelector('#chat-log .message.assistant.error');
    expect(await page.locator('#chat-log .message.assistant.error').textContent()).toMatch(/LLM/);
    await responses.settle();
  });
});
