// A local stand-in for a reranking endpoint (POST /rerank), answering in the shape it was asked in:
// TEI ({query, texts} -> [{index, score}]) or Cohere ({model, query, documents} -> {results}). The
// scores come from a function the test sets; failures can be scripted, and every request is kept.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RerankRequest {
  path: string;
  authorization?: string;
  body: { query: string; texts?: string[]; documents?: string[]; model?: string; truncate?: boolean };
}

export interface StandInReranker {
  /** The base URL to configure as RERANKER_BASE_URL. */
  baseUrl: string;
  requests: RerankRequest[];
  /** Scores a text for a query; by default, how many of the query's words the text holds. */
  score: (query: string, text: string) => number;
  /** The next `count` requests answer `status` (then normal answers resume). */
  failNext(count: number, status: number): void;
  /** Every request answers this way until reset (null: normal answers). */
  answer: null | { status: number; body: unknown };
  reset(): void;
  close(): Promise<void>;
}

export const wordOverlap = (query: string, text: string): number => {
  const words = new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  return (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => words.has(w)).length;
};

export async function startStandInReranker(): Promise<StandInReranker> {
  let failures: { left: number; status: number } = { left: 0, status: 500 };
  const standIn: StandInReranker = {
    baseUrl: '',
    requests: [],
    score: wordOverlap,
    failNext: (count, status) => (failures = { left: count, status }),
    answer: null,
    reset() {
      this.requests.length = 0;
      this.score = wordOverlap;
      this.answer = null;
      failures = { left: 0, status: 500 };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as RerankRequest['body'];
      standIn.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const reply = (status: number, payload: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      if (req.url !== '/rerank') return reply(404, { error: 'not found' });
      if (failures.left > 0) {
        failures.left--;
        return reply(failures.status, { error: 'scripted failure' });
      }
      if (standIn.answer) return reply(standIn.answer.status, standIn.answer.body);
      const texts = body.documents ?? body.texts ?? [];
      const scored = texts.map((text, index) => ({ index, score: standIn.score(body.query, text) }));
      // Real servers answer best first, not in the order sent.
      scored.sort((a, b) => b.score - a.score);
      if (body.documents) reply(200, { results: scored.map(({ index, score }) => ({ index, relevance_score: score })) });
      else reply(200, scored);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}
