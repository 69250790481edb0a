// The rag suite: what RAG over chosen chunks (POST /api/chunk/generate) adds to the model's own
// time. The model is the stand-in OpenAI-compatible server of the tests (real HTTP, real
// server-sent events; test/support/llmStandIn.ts), in this process, answering a fixed text in
// pieces 2 ms apart; the service runs in a process of its own. One client, one request at a time,
// each measured the same two ways:
//   direct   the prompt the service sent (captured from the stand-in) sent straight to the model:
//            streamed, the time to the first piece of the answer; whole, the time to the answer;
//   service  generate_off_chunks, streamed (the time to the first byte of the answer) and whole;
//   topic    create_message in a new topic, streamed: a hybrid search of the dataset for the question
//            before the model is asked, so the search alone (search_chunks, same query and page
//            size, whole response) is timed too.
// Reported: p50 / p99 of each, and service − direct, what the service adds (reading the chunks,
// building the prompt, its HTTP, and the RAG query it records); for a topic, also what it adds
// beyond its search.
import { createClient } from '../sdk/src/generated/client/index.js';
import { createChunk, createDataset, createOrganization, createTopic } from '../sdk/src/generated/sdk.gen.js';
import { startLlmStandIn } from '../test/support/llmStandIn.js';
import { generateCorpus } from './corpus.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { fmt, percentile, table } from './report.js';
import { spawnService } from './service-process.js';

export interface RagOptions {
  requests: number;
  seed: number;
}

const WARMUP = 20;
const CHUNKS = 5;
const QUESTION = 'Where does the glacier end?';
const ANSWER = 'The glacier ends above the gorge after about twenty kilometres of ice, as document one says. '.repeat(3).trim();

interface Latencies {
  p50: number;
  p99: number;
}

export interface RagResult {
  mode: string;
  requests: number;
  chunks_per_answer: number;
  answer_characters: number;
  first_token_ms: { direct: Latencies; service: Latencies; added: Latencies };
  whole_answer_ms: { direct: Latencies; service: Latencies; added: Latencies };
  topic_first_token_ms: { direct: Latencies; service: Latencies; added: Latencies; search: Latencies; added_beyond_search: Latencies };
}

const latencies = (values: number[]): Latencies => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
const added = (service: number[], direct: number[]): Latencies => ({
  p50: percentile(service, 50) - percentile(direct, 50),
  p99: percentile(service, 99) - percentile(direct, 99),
});

/** Milliseconds until the response's body yields its first byte that `counts`, and until it ends. */
async function timed(url: string, init: RequestInit, counts: (text: string) => boolean): Promise<{ first: number; whole: number }> {
  const t0 = performance.now();
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let first = Number.NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (Number.isNaN(first) && counts(decoder.decode(value, { stream: true }))) first = performance.now() - t0;
  }
  return { first, whole: performance.now() - t0 };
}

export async function runRag(modeEnv: ModeEnvironment, options: RagOptions, log: (line: string) => void): Promise<RagResult> {
  const standIn = await startLlmStandIn();
  standIn.otherwise = { kind: 'answer', text: ANSWER };
  const env = { ...(await modeEnv.freshEnv()), LLM_BASE_URL: standIn.url, LLM_DEFAULT_MODEL: 'stand-in' };
  const service = await spawnService(env, log);
  try {
    const admin = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const org = (await createOrganization({ client: admin, body: { name: 'rag bench' }, throwOnError: true })).data;
    const dataset = (await createDataset({ client: admin, headers: { 'SVC-Organization': org.id }, body: { dataset_name: 'rag' }, throwOnError: true })).data;
    const corpus = generateCorpus({ count: CHUNKS, seed: options.seed });
    const created = await createChunk({ client: admin, headers: { 'SVC-Dataset': dataset.id }, body: corpus, throwOnError: true });
    const chunkIds = (created.data as { chunk_metadata: { id: string }[] }).chunk_metadata.map((c) => c.id);
    const generate = (stream: boolean): RequestInit => ({
      method: 'POST',
      headers: { authorization: ADMIN_KEY, 'content-type': 'application/json', 'SVC-Dataset': dataset.id },
      body: JSON.stringify({ chunk_ids: chunkIds, prev_messages: [{ role: 'user', content: QUESTION }], stream_response: stream }),
    });
    const generateUrl = `${service.url}/api/chunk/generate`;
    // The prompt the service sends, to send the model directly.
    await timed(generateUrl, generate(false), () => true);
    const prompt = standIn.received.at(-1)!.body;
    const direct = (stream: boolean): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...prompt, stream }),
    });
    const directUrl = `${standIn.url}/chat/completions`;
    // The first piece of the answer: in the event stream, the first event that carries text.
    const carriesText = (text: string) => /"content":"[^"]/.test(text);

    const headers = { authorization: ADMIN_KEY, 'content-type': 'application/json', 'SVC-Dataset': dataset.id };
    const ask = (topicId: string): RequestInit => ({ method: 'POST', headers, body: JSON.stringify({ topic_id: topicId, new_message_content: QUESTION }) });
    const newTopic = async () =>
      (await createTopic({ client: admin, headers: { 'SVC-Dataset': dataset.id }, body: { owner_id: 'bench' }, throwOnError: true })).data.id;
    const messageUrl = `${service.url}/api/message`;
    const searchUrl = `${service.url}/api/chunk/search`;
    const search: RequestInit = { method: 'POST', headers, body: JSON.stringify({ query: QUESTION, search_type: 'hybrid', page_size: 8 }) };
    await timed(messageUrl, ask(await newTopic()), () => true);
    const messagePrompt = standIn.received.at(-1)!.body;
    const directMessage: RequestInit = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...messagePrompt, stream: true }),
    };

    const figures = {
      directFirst: [] as number[],
      serviceFirst: [] as number[],
      directWhole: [] as number[],
      serviceWhole: [] as number[],
      topicDirect: [] as number[],
      topicService: [] as number[],
      search: [] as number[],
    };
    log(`${WARMUP} warm-up + ${options.requests} requests of each kind, one at a time…`);
    for (let i = 0; i < WARMUP + options.requests; i++) {
      const directStream = await timed(directUrl, direct(true), carriesText);
      const serviceStream = await timed(generateUrl, generate(true), () => true);
      const directWhole = await timed(directUrl, direct(false), () => true);
      const serviceWhole = await timed(generateUrl, generate(false), () => true);
      const topicId = await newTopic();
      const topicDirect = await timed(directUrl, directMessage, carriesText);
      const topicService = await timed(messageUrl, ask(topicId), () => true);
      const searched = await timed(searchUrl, search, () => true);
      if (i < WARMUP) continue;
      figures.topicDirect.push(topicDirect.first);
      figures.topicService.push(topicService.first);
      figures.search.push(searched.whole);
      figures.directFirst.push(directStream.first);
      figures.serviceFirst.push(serviceStream.first);
      figures.directWhole.push(directWhole.whole);
      figures.serviceWhole.push(serviceWhole.whole);
    }
    standIn.received.length = 0;
    return {
      mode: modeEnv.mode,
      requests: options.requests,
      chunks_per_answer: CHUNKS,
      answer_characters: ANSWER.length,
      first_token_ms: {
        direct: latencies(figures.directFirst),
        service: latencies(figures.serviceFirst),
        added: added(figures.serviceFirst, figures.directFirst),
      },
      whole_answer_ms: {
        direct: latencies(figures.directWhole),
        service: latencies(figures.serviceWhole),
        added: added(figures.serviceWhole, figures.directWhole),
      },
      topic_first_token_ms: {
        direct: latencies(figures.topicDirect),
        service: latencies(figures.topicService),
        added: added(figures.topicService, figures.topicDirect),
        search: latencies(figures.search),
        added_beyond_search: {
          p50: percentile(figures.topicService, 50) - percentile(figures.topicDirect, 50) - percentile(figures.search, 50),
          p99: percentile(figures.topicService, 99) - percentile(figures.topicDirect, 99) - percentile(figures.search, 99),
        },
      },
    };
  } finally {
    await service.stop();
    await standIn.close();
  }
}

export function formatRag(mode: string, r: RagResult): string {
  const row = (name: string, l: { direct: Latencies; service: Latencies; added: Latencies }) => [
    name,
    `${fmt(l.direct.p50, 2)} / ${fmt(l.direct.p99, 2)}`,
    `${fmt(l.service.p50, 2)} / ${fmt(l.service.p99, 2)}`,
    `${fmt(l.added.p50, 2)} / ${fmt(l.added.p99, 2)}`,
  ];
  return [
    `rag · ${mode} · generate_off_chunks over ${r.chunks_per_answer} chunks, a ${r.answer_characters}-character answer from the stand-in model · ${r.requests} requests of each kind, one client`,
    table([
      ['ms', 'model directly p50 / p99', 'through the service p50 / p99', 'added p50 / p99'],
      row('first token (streamed)', r.first_token_ms),
      row('whole answer (not streamed)', r.whole_answer_ms),
      row('first token in a topic (create_message)', r.topic_first_token_ms),
    ]),
    `create_message searches first: search_chunks alone (hybrid, 8 results) p50 / p99 ${fmt(r.topic_first_token_ms.search.p50, 2)} / ${fmt(r.topic_first_token_ms.search.p99, 2)} ms; added beyond it ${fmt(r.topic_first_token_ms.added_beyond_search.p50, 2)} / ${fmt(r.topic_first_token_ms.added_beyond_search.p99, 2)} ms`,
  ].join('\n');
}
