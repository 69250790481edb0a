// A stand-in for an OpenAI-compatible LLM endpoint, for tests: real HTTP and real server-sent
// events on /v1/chat/completions, answering whole or streamed as asked, with a tool call when told,
// and failing on demand (a status, a slow first token, a stream cut in the middle, an answer that is
// not JSON). It also takes multipart uploads on /v1/images/edits (answering base64 images) and
// /v1/audio/transcriptions (answering the text). It records every request it receives.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

export type Behaviour =
  | { kind: 'answer'; text: string; delayMs?: number }
  | { kind: 'status'; status: number }
  | { kind: 'cut'; text: string }
  | { kind: 'garbage' }
  /** A chat answer calling `name` (the function tool_choice names when missing) with these arguments. */
  | { kind: 'toolCall'; arguments: string; name?: string }
  /** An /images/edits answer: these images, base64. */
  | { kind: 'images'; base64: string[] };

export interface ReceivedFile {
  field: string;
  filename: string;
  mimeType: string;
  bytes: Buffer;
}

export interface ReceivedRequest {
  path: string;
  authorization: string | undefined;
  /** JSON requests as sent; a multipart upload's text fields. */
  body: { model: string; messages: { role: string; content: string }[]; stream?: boolean; [key: string]: unknown };
  /** The files of a multipart upload. */
  files: ReceivedFile[];
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
    const path = req.url ?? '';
    const route = ['/chat/completions', '/images/edits', '/audio/transcriptions'].find((r) => path.endsWith(r));
    if (req.method !== 'POST' || !route) return void res.writeHead(404).end();
    void readRequest(req).then(({ body, files }) => {
      standIn.received.push({ path, authorization: req.headers.authorization, body, files });
      const behaviour = standIn.next.shift() ?? standIn.otherwise;
      res.on('close', () => {
        if (!res.writableFinished) standIn.abandoned++;
      });
      if (route === '/chat/completions') void respond(behaviour, body, res);
      else respondToUpload(route, behaviour, res);
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

/** A JSON body, or a multipart one's fields and files. */
async function readRequest(req: http.IncomingMessage): Promise<Pick<ReceivedRequest, 'body' | 'files'>> {
  if (!req.headers['content-type']?.startsWith('multipart/form-data')) {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    return { body: JSON.parse(Buffer.concat(parts).toString()), files: [] };
  }
  const fields: Record<string, string> = {};
  const files: ReceivedFile[] = [];
  await new Promise<void>((resolve, reject) => {
    const form = busboy({ headers: req.headers });
    form.on('field', (name, value) => {
      fields[name] = value;
    });
    form.on('file', (field, stream, info) => {
      const parts: Buffer[] = [];
      stream.on('data', (part: Buffer) => parts.push(part));
      stream.on('end', () => files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, bytes: Buffer.concat(parts) }));
    });
    form.on('close', resolve);
    form.on('error', reject);
    req.pipe(form);
  });
  return { body: { messages: [], ...fields, model: fields.model ?? '' }, files };
}

/** A 1x1 PNG, what /images/edits makes unless told otherwise. */
export const TINY_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

function respondToUpload(route: string, behaviour: Behaviour, res: http.ServerResponse): void {
  if (behaviour.kind === 'status')
    return void res.writeHead(behaviour.status, { 'content-type': 'application/json' }).end('{"error":{"message":"stand-in failure"}}');
  if (behaviour.kind === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('this is not json');
  const answer =
    route === '/audio/transcriptions'
      ? { text: behaviour.kind === 'answer' ? behaviour.text : '' }
      : { created: 0, data: (behaviour.kind === 'images' ? behaviour.base64 : [TINY_PNG_BASE64]).map((b64_json) => ({ b64_json })) };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function respond(behaviour: Behaviour, body: ReceivedRequest['body'], res: http.ServerResponse): Promise<void> {
  if (behaviour.kind === 'status')
    return void res.writeHead(behaviour.status, { 'content-type': 'application/json' }).end('{"error":{"message":"stand-in failure"}}');
  if (behaviour.kind === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('this is not json');
  if (behaviour.kind === 'toolCall')
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(toolCallAnswer(behaviour, body)));
  // Images answer /images/edits only; a chat request told to answer them is a test's mistake.
  if (behaviour.kind === 'images') return void res.writeHead(404).end();
  const text = behaviour.text;
  // A message's content may be parts (text and images): their text is what is counted.
  const words = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content)).split(/\s+/).length;
  const prompt = body.messages.reduce((n, m) => n + words(m.content), 0);
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

function toolCallAnswer(behaviour: Extract<Behaviour, { kind: 'toolCall' }>, body: ReceivedRequest['body']) {
  const chosen = (body.tool_choice as { function?: { name?: string } } | undefined)?.function?.name;
  const call = { id: 'call_stand_in', type: 'function', function: { name: behaviour.name ?? chosen ?? 'unnamed', arguments: behaviour.arguments } };
  return {
    id: 'chatcmpl-stand-in',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}
