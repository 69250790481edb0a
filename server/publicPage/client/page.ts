// The public page's script, bundled with the SDK for the browser (publicPage/script.ts): search as
// you type with the matching passages marked, tag filters, the whole chunk on a click, and the chat.
// It reads its settings from the page (publicPage/settings.ts) and calls the API with the page's key.
import { type ChunkFilter, type ChunkMetadata, ChunkSearch, type ConditionType, type ScoreChunk, type SearchMethod } from '../../../sdk/src/index.js';
import type { PageSettings } from '../settings.js';
import { startChat } from './chat.js';
import { byId, debounce, el } from './dom.js';
import { chunkNodes, passageNodes, plainText } from './safeHtml.js';

const settings = JSON.parse(byId('page-settings').textContent ?? '{}') as PageSettings;
// The page is served at <service>/api/public_page/<dataset>: the service is two folders up.
const sdk = new ChunkSearch({ baseUrl: new URL('../..', location.href).href, apiKey: settings.apiKey, datasetId: settings.datasetId });
const searchType = (settings.searchOptions.search_type as SearchMethod | undefined) ?? 'fulltext';
const selectedTags = new Set((settings.tags ?? []).filter((t) => t.selected).map((t) => t.tag));

const input = byId<HTMLInputElement>('query');
const status = byId('status');
const results = byId<HTMLOListElement>('results');
const viewer = byId<HTMLDialogElement>('chunk');

applyLook();
input.placeholder = settings.placeholder;
let searched = 0;
let inFlight: AbortController | null = null;
const searchSoon = debounce(settings.debounceMs, () => void search());
input.addEventListener('input', searchSoon);
byId('search-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void search();
});
byId('chunk-close').addEventListener('click', () => viewer.close());
offerExamples();
await offerTags();
if (settings.chat) {
  byId('chat').hidden = false;
  startChat(byId<HTMLFormElement>('chat-form'), byId('chat-log'), { sdk, searchType, filters, open: showChunk, title: titleOf });
}
if (settings.defaultSearchQuery) {
  input.value = settings.defaultSearchQuery;
  await search();
}
document.body.dataset.ready = 'true';

function applyLook(): void {
  const root = document.documentElement;
  root.dataset.theme = settings.theme;
  if (settings.brandColor && CSS.supports('color', settings.brandColor)) root.style.setProperty('--brand', settings.brandColor);
  if (settings.brandFontFamily && CSS.supports('font-family', settings.brandFontFamily)) root.style.setProperty('--font', settings.brandFontFamily);
  byId('heading').textContent = settings.heading;
  if (settings.brandLogoImgSrcUrl) {
    const logo = byId<HTMLImageElement>('logo');
    logo.src = settings.brandLogoImgSrcUrl;
    logo.alt = settings.brandName;
    logo.hidden = false;
  }
  const footer = byId('footer');
  if (settings.creatorName) {
    const who = settings.creatorLinkedInUrl ? link(settings.creatorName, settings.creatorLinkedInUrl) : document.createTextNode(settings.creatorName);
    footer.append('Made by ', who, '. ');
  }
  if (settings.problemLink) footer.append(link('Report a problem', settings.problemLink));
}

function link(text: string, href: string): HTMLAnchorElement {
  const a = el('a', { text });
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  return a;
}

function offerExamples(): void {
  const box = byId('examples');
  for (const query of settings.defaultSearchQueries) {
    const button = el('button', { type: 'button', text: query });
    button.addEventListener('click', () => {
      input.value = query;
      void search();
    });
    box.append(button);
  }
}

/** The page's tags, or else the dataset's ten most used, as toggles. */
async function offerTags(): Promise<void> {
  let tags = settings.tags;
  if (!tags) {
    try {
      const { tags: used } = await sdk.getAllDatasetTags({ page: 1, page_size: 10 }, settings.datasetId);
      tags = used.map(({ tag }) => ({ tag, label: tag, selected: false }));
    } catch {
      tags = []; // the page works without filters
    }
  }
  const box = byId('tags');
  for (const { tag, label } of tags) {
    const toggle = el('button', { type: 'button', className: 'tag', text: label });
    toggle.setAttribute('aria-pressed', String(selectedTags.has(tag)));
    toggle.addEventListener('click', () => {
      if (selectedTags.has(tag)) selectedTags.delete(tag);
      else selectedTags.add(tag);
      toggle.setAttribute('aria-pressed', String(selectedTags.has(tag)));
      if (input.value.trim()) void search();
    });
    box.append(toggle);
  }
}

/** The page's own filters with the selected tags added (a chunk must carry one of them). */
function filters(): ChunkFilter | null {
  const base = (settings.searchOptions.filters ?? null) as ChunkFilter | null;
  if (selectedTags.size === 0) return base;
  const byTag: ConditionType = { field: 'tag_set', match_any: [...selectedTags] };
  return { ...base, must: [...(base?.must ?? []), byTag] };
}

async function search(): Promise<void> {
  const query = input.value.trim();
  const mine = ++searched;
  inFlight?.abort();
  if (!query) {
    results.replaceChildren();
    status.textContent = '';
    return;
  }
  inFlight = new AbortController();
  status.textContent = 'Searching…';
  const request = {
    ...settings.searchOptions,
    query,
    search_type: searchType,
    filters: filters(),
    highlight_options: { highlight_results: true, pre_tag: '<mark>', post_tag: '</mark>', highlight_max_num: 3 },
  };
  try {
    const found = settings.useAutocomplete ? await sdk.autocomplete(request, inFlight.signal) : await sdk.search(request, inFlight.signal);
    if (mine !== searched) return;
    showResults(found.chunks, query);
  } catch (error) {
    if (mine !== searched || (error as Error).name === 'AbortError') return;
    results.replaceChildren();
    status.textContent = error instanceof Error ? error.message : String(error);
  }
}

/** Shows the results of `query`, which the list then names (data-query), as the last one answered. */
function showResults(found: ScoreChunk[], query: string): void {
  status.textContent = found.length ? '' : 'No results.';
  results.dataset.query = query;
  results.replaceChildren(
    ...found.map(({ chunk, highlights }) => {
      const record = chunk as ChunkMetadata;
      const button = el('button', { type: 'button', className: 'result' }, el('strong', { className: 'title', text: titleOf(record) }));
      const passages = settings.showResultHighlights && highlights?.length ? highlights : [excerpt(record)];
      for (const passage of passages) button.append(el('p', { className: 'passage' }, passageNodes(passage)));
      const tags = (record.tag_set ?? []).filter((t): t is string => Boolean(t));
      if (tags.length) button.append(el('span', { className: 'chunk-tags', text: tags.join(' · ') }));
      button.addEventListener('click', () => showChunk(record));
      return el('li', {}, button);
    }),
  );
}

function showChunk(chunk: ChunkMetadata): void {
  byId('chunk-title').textContent = titleOf(chunk);
  byId('chunk-body').replaceChildren(chunkNodes(chunk.chunk_html ?? ''));
  const source = byId<HTMLAnchorElement>('chunk-link');
  source.hidden = !/^https?:/i.test(chunk.link ?? '');
  if (!source.hidden) {
    source.href = chunk.link!;
    source.target = settings.openLinksInNewTab ? '_blank' : '_self';
  }
  if (!viewer.open) viewer.showModal();
}

/** A result's title: its metadata's title or name, else its link, else the start of its text. */
function titleOf(chunk: ChunkMetadata): string {
  const meta = (chunk.metadata ?? {}) as Record<string, unknown>;
  for (const key of ['title', 'name', 'heading']) if (typeof meta[key] === 'string' && meta[key]) return meta[key] as string;
  if (chunk.link) return chunk.link;
  const text = plainText(chunk.chunk_html ?? '').trim();
  return text.length > 80 ? `${text.slice(0, 80)}…` : text || chunk.tracking_id || chunk.id;
}

function excerpt(chunk: ChunkMetadata): string {
  const text = plainText(chunk.chunk_html ?? '').trim();
  // As text: the passage is read as HTML, so its characters are escaped.
  const div = document.createElement('div');
  div.textContent = text.length > 240 ? `${text.slice(0, 240)}…` : text;
  return div.innerHTML;
}
