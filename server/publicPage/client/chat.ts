// The page's chat: each question is searched in the dataset, and the LLM answers from the chunks
// found (`POST /api/chunk/generate`, which the page's read-only key may call), its answer shown as
// it is written. The conversation lives in the page; the chunks an answer came from are listed under it.
import type { ChatMessageProxy, ChunkFilter, ChunkMetadata, ChunkSearch, SearchMethod } from '../../../sdk/src/index.js';
import { el } from './dom.js';

export interface ChatOptions {
  sdk: ChunkSearch;
  searchType: SearchMethod;
  filters: () => ChunkFilter | null;
  /** Shows a chunk the answer came from. */
  open: (chunk: ChunkMetadata) => void;
  title: (chunk: ChunkMetadata) => string;
}

export function startChat(form: HTMLFormElement, log: HTMLElement, options: ChatOptions): void {
  const history: ChatMessageProxy[] = [];
  const input = form.querySelector('textarea, input') as HTMLTextAreaElement | HTMLInputElement;
  const send = form.querySelector('button') as HTMLButtonElement;
  let busy = false;

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (!question || busy) return;
    busy = true;
    send.disabled = true;
    input.value = '';
    log.append(el('div', { className: 'message user', text: question }));
    const answer = el('div', { className: 'message assistant pending', text: '…' });
    log.append(answer);
    answer.scrollIntoView({ block: 'nearest' });
    try {
      const found = await options.sdk.search({ query: question, search_type: options.searchType, page_size: 8, filters: options.filters() });
      const chunks = found.chunks.map((c) => c.chunk as ChunkMetadata);
      if (chunks.length === 0) {
        answer.textContent = 'No passage of this dataset matches the question.';
        return;
      }
      const prev_messages = [...history, { role: 'user' as const, content: question }];
      const stream = await options.sdk.ragOnChunkStream({ prev_messages, chunk_ids: chunks.map((c) => c.id), stream_response: true });
      let text = '';
      for await (const piece of stream) {
        text += piece;
        answer.textContent = text;
      }
      history.push(prev_messages[prev_messages.length - 1], { role: 'assistant', content: text });
      answer.append(sourcesOf(chunks, options));
    } catch (error) {
      answer.textContent = error instanceof Error ? error.message : String(error);
      answer.classList.add('error');
    } finally {
      answer.classList.remove('pending');
      busy = false;
      send.disabled = false;
    }
  });
}

function sourcesOf(chunks: ChunkMetadata[], options: ChatOptions): HTMLElement {
  const list = el('ol', { className: 'sources' });
  for (const chunk of chunks) {
    const button = el('button', { type: 'button', text: options.title(chunk) });
    button.addEventListener('click', () => options.open(chunk));
    list.append(el('li', {}, button));
  }
  return el('details', {}, el('summary', { text: `From ${chunks.length} passage${chunks.length === 1 ? '' : 's'}` }), list);
}
