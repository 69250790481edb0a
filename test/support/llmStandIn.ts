// A stand-in for an OpenAI-compatible LLM endpoint, for tests: real HTTP and real server-sent
// events on /v1/chat/completions, answering whole or streamed as asked, and failing on demand (a
// status, a slow first token, a stream cut in the middle, an answer that is not JSON). It records
// every request it receives.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour =
  | { kind: 'answer'; text: string; delayMs?: number }
  | { kind: 'status'; status: number }
  | { kind: 'cut'; text: string }
  | { kind: 'garbage' };

export interface ReceivedRequest {
  path: string;
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: string }[]; stream?: boolean; [key: string]: unknown };
}

export interface LlmStandIn {
  /** Its base URL, as a dataset or the instance names it (`…/v1`). */
  url: string;
  received: ReceivedRequest[];
  /** What the next requests get, in order; once used up, `otherwise`. */
  next: Behaviour[];
  otherwise: Behaviour;
  /** Requests whose client went away before the answer was over. */
  abandoned: number;
  close(): Promise<void>;
}

/** The answer split in pieces of a few characters, as a model streams tokens. */
const pieces = (text: string) => text.match(/.{1,4}/gs) ?? [];

export async function startLlmStandIn(): Promise<LlmStandIn> {
  const standIn = {
    received: [] as ReceivedRequest[],
    next: [] as Behaviour[],
    otherwise: { kind: 'answer', text: 'A grounded answer.' } as Behaviour,
    abandoned: 0,
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (part) => {
      raw += part;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return res.writeHead(404).end();
      const body = JSON.parse(raw) as ReceivedRequest['body'];
      standIn.received.push({ path: req.url, authorization: req.headers.authorization, body });
      const behaviour = standIn.next.shift() ?? standIn.otherwise;
      res.on('close', () => {
        if (!res.writableFinished) standIn.abandoned++;
      });
      void respond(behaviour, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(standIn, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function respond(behaviour: Behaviour, body: ReceivedRequest['body'], res: http.ServerResponse): Promise<void> {
  if (behaviour.kind === 'status')
    return void res.writeHead(behaviour.status, { 'content-type': 'application/json' }).end('{"error":{"message":"stand-in failure"}}');
  if (behaviour.kind === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('this is not json');
  const text = behaviour.text;
  const prompt = body.messages.reduce((n, m) => n + m.content.split(/\s+/).length, 0);
  if (!body.stream) {
    if (behaviour.kind === 'answer' && behaviour.delayMs) await sleep(behaviour.delayMs);
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'chatcmpl-stand-in',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: prompt, completion_tokens: text.split(/\s+/).length, total_tokens: prompt + text.split(/\s+/).length },
      }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const event = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-stand-in', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(event({ role: 'assistant', content: '' }, null));
  if (behaviour.kind === 'answer' && behaviour.delayMs) await sleep(behaviour.delayMs);
  const parts = pieces(text);
  for (const [i, part] of parts.entries()) {
    if (res.destroyed) return;
    res.write(event({ content: part }, null));
    if (behaviour.kind === 'cut' && i >= parts.length / 2) return void res.socket?.destroy();
    await sleep(2);
  }
  res.write(event({}, 'stop'));
  res.end('data: [DONE]\n\n');
}
