// Outbound requests: which addresses a tenant's URL may reach, where the instance's keys go, and
// redirects checked hop by hop. A local server plays every endpoint and records what it received.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  OutboundRefusedError,
  OutboundUnreachableError,
  outboundFetch,
  parseAllowList,
  refusalOf,
  STRICT_OUTBOUND,
  type Credential,
  type OutboundSettings,
} from '../../server/engines/outbound.js';

let server: http.Server;
let port: number;
const received: { path: string; authorization?: string; googKey?: string; method?: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    received.push({
      path: req.url ?? '',
      authorization: req.headers.authorization,
      googKey: req.headers['x-goog-api-key'] as string | undefined,
      method: req.method,
    });
    const redirect = /\/redirect\/(\d+)\?to=(.*)$/.exec(req.url ?? '');
    if (redirect) return res.writeHead(Number(redirect[1]), { location: decodeURIComponent(redirect[2]) }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    // Headers at once, then the body in two parts 300 ms apart (a model streaming its answer).
    if (req.url === '/trickle') {
      res.writeHead(200, { 'content-type': 'text/plain' }).write('first ');
      setTimeout(() => res.end('second'), 300);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  received.length = 0;
});

const settings = (allowPrivate: string[], more: Partial<OutboundSettings> = {}): OutboundSettings => ({
  allowPrivate,
  embedding: null,
  reranker: null,
  llm: null,
  ...more,
});
const get = (outbound: OutboundSettings, url: string, credential?: Credential) => outboundFetch(outbound, url, { timeoutMs: 5000, credential });
const local = (path: string, host = '127.0.0.1') => `http://${host}:${port}${path}`;
const redirectTo = (status: number, to: string) => `/redirect/${status}?to=${encodeURIComponent(to)}`;

describe('private addresses', () => {
  it.each([
    ['a loopback address', 'http://127.0.0.1:PORT/x', /127\.0\.0\.1 is a loopback address.*OUTBOUND_ALLOW_PRIVATE/],
    ['a name that resolves to loopback', 'http://localhost:PORT/x', /localhost: .* is a loopback address.*OUTBOUND_ALLOW_PRIVATE/],
    ['IPv6 loopback', 'http://[::1]:PORT/x', /::1 is a loopback address/],
    ['an IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]:PORT/x', /loopback address/],
  ])('refuses %s, without connecting', async (_what, url, message) => {
    const refused = await get(STRICT_OUTBOUND, url.replace('PORT', String(port))).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OutboundRefusedError);
    expect((refused as Error).message).toMatch(message);
    expect(received).toEqual([]);
  });

  it.each([['127.0.0.1'], ['127.0.0.0/8'], ['*'], ['::ffff:127.0.0.1']])('reaches a loopback address OUTBOUND_ALLOW_PRIVATE=%s allows', async (entry) => {
    const response = await get(settings(parseAllowList(entry)), local('/x'));
    expect(await response.text()).toBe('hello');
  });

  it('allows a host by name, whatever it resolves to; other names and addresses stay refused', async () => {
    expect((await get(settings(['localhost']), local('/x', 'localhost'))).status).toBe(200);
    await expect(get(settings(['localhost']), local('/x'))).rejects.toThrow(/loopback/);
    await expect(get(settings(['10.0.0.0/8']), local('/x'))).rejects.toThrow(/loopback/);
  });

  it('classifies addresses: public ones pass, every private, link-local and special range is refused', () => {
    for (const address of ['8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.8.8']) expect(refusalOf(STRICT_OUTBOUND, address)).toBeNull();
    for (const [address, range] of [
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['fe80::1', 'linkLocal'],
      ['fd12::1', 'uniqueLocal'],
      ['0.0.0.0', 'unspecified'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['::ffff:10.0.0.1', 'private'],
    ]) {
      expect(refusalOf(STRICT_OUTBOUND, address)).toMatch(new RegExp(`^${address.replace(/[.:]/g, '\\$&')} is a ${range} address`));
    }
  });

  it('refuses URLs that are not http or https', async () => {
    await expect(get(STRICT_OUTBOUND, 'file:///etc/passwd')).rejects.toThrow(new OutboundRefusedError('not an http or https URL'));
    await expect(get(STRICT_OUTBOUND, 'nonsense')).rejects.toThrow(new OutboundRefusedError('not a URL'));
  });

  it('reads the allow list, naming a bad entry', () => {
    expect(parseAllowList(' 10.0.0.1 , fd00::/8,,my-host.internal ')).toEqual(['10.0.0.1', 'fd00::/8', 'my-host.internal']);
    expect(() => parseAllowList('10.0.0.0/40')).toThrow(/10\.0\.0\.0\/40 is not a CIDR range/);
    expect(() => parseAllowList('10.0.0.1,my host')).toThrow(/my host is neither an address, a CIDR range nor a host name/);
  });
});

describe('redirects', () => {
  it('are followed when every hop is allowed', async () => {
    const response = await get(settings(['127.0.0.1']), local(redirectTo(302, '/x')));
    expect(await response.text()).toBe('hello');
    expect(received.map((r) => r.path)).toEqual([redirectTo(302, '/x'), '/x']);
  });

  it('to a private address are refused, the hop never made', async () => {
    // The first host is allowed by name; it sends the request on to an address that is not allowed.
    const refused = get(settings(['localhost']), local(redirectTo(307, local('/secret-admin')), 'localhost'));
    await expect(refused).rejects.toThrow(/127\.0\.0\.1 is a loopback address/);
    expect(received.map((r) => r.path)).toEqual([redirectTo(307, local('/secret-admin'))]);
  });

  it('stop after five hops, and never to another scheme', async () => {
    await expect(get(settings(['*']), local('/loop'))).rejects.toThrow(new OutboundRefusedError('redirected more than 5 times'));
    expect(received).toHaveLength(6);
    await expect(get(settings(['*']), local(redirectTo(302, 'file:///etc/passwd')))).rejects.toThrow(/redirected to a URL that is not http or https/);
  });

  it('turn a POST into a GET on 303, and keep it on 307', async () => {
    const post = (status: number) => outboundFetch(settings(['*']), local(redirectTo(status, '/x')), { method: 'POST', body: '{}', timeoutMs: 5000 });
    await post(303);
    await post(307);
    expect(received.map((r) => r.method)).toEqual(['POST', 'GET', 'POST', 'POST']);
  });
});

describe("the instance's keys", () => {
  const operator = () =>
    settings([], {
      embedding: { baseUrl: local('/operator/v1/'), apiKey: 'instance-embedding-key' },
      reranker: { baseUrl: local('/rerank-op'), apiKey: 'instance-reranker-key' },
    });

  it("go to the operator's endpoint, which is reached although private", async () => {
    expect((await get(operator(), local('/operator/v1/embeddings'), 'embedding')).status).toBe(200);
    expect((await get(operator(), local('/rerank-op/rerank'), 'reranker')).status).toBe(200);
    expect(received.map((r) => r.authorization)).toEqual(['Bearer instance-embedding-key', 'Bearer instance-reranker-key']);
  });

  it('go to no other URL, not even another path of the same server', async () => {
    const allowed = { ...operator(), allowPrivate: ['127.0.0.1'] };
    await get(allowed, local('/tenant/v1/embeddings'), 'embedding');
    await get(allowed, local('/operator/v1-evil/embeddings'), 'embedding');
    // Each key belongs to its own endpoint.
    await get(allowed, local('/operator/v1/embeddings'), 'reranker');
    expect(received.map((r) => r.authorization)).toEqual([undefined, undefined, undefined]);
    // Without the allowance, the other paths are a tenant's private URL like any other, and so is
    // the operator's endpoint when it is not asked for what it serves (a webhook, say).
    await expect(get(operator(), local('/tenant/v1/embeddings'), 'embedding')).rejects.toThrow(/OUTBOUND_ALLOW_PRIVATE/);
    await expect(get(operator(), local('/operator/v1/embeddings'))).rejects.toThrow(/OUTBOUND_ALLOW_PRIVATE/);
    await expect(get(operator(), local('/operator/v1/embeddings'), 'reranker')).rejects.toThrow(/OUTBOUND_ALLOW_PRIVATE/);
  });

  it("are not carried by a redirect out of the operator's endpoint, whose target is checked", async () => {
    const allowed = { ...operator(), allowPrivate: ['127.0.0.1'] };
    await get(allowed, local(`/operator/v1${redirectTo(307, '/elsewhere')}`), 'embedding');
    expect(received.map((r) => [r.path.split('?')[0], r.authorization])).toEqual([
      ['/operator/v1/redirect/307', 'Bearer instance-embedding-key'],
      ['/elsewhere', undefined],
    ]);
    await expect(get(operator(), local(`/operator/v1${redirectTo(307, '/elsewhere')}`), 'embedding')).rejects.toThrow(/loopback/);
  });

  it('go in the header the endpoint names (the YouTube API), and as far as it only', async () => {
    const operatorYoutube = (allowPrivate: string[] = []) =>
      settings(allowPrivate, {
        youtube: { baseUrl: local('/youtube/v3'), apiKey: 'instance-youtube-key', keyHeader: 'x-goog-api-key' },
        youtubeTranscripts: { baseUrl: local('/yt'), apiKey: null },
      });
    const youtube = operatorYoutube();
    await get(youtube, local('/youtube/v3/channels?part=id'), 'youtube');
    // Out of the API's base, a redirect's target is a URL like any other: allowed here to be followed.
    await get(operatorYoutube(['127.0.0.1']), local(`/youtube/v3${redirectTo(302, '/yt/watch')}`), 'youtube');
    await get(youtube, local('/yt/watch'), 'youtubeTranscripts');
    expect(received.map((r) => [r.path.split('?')[0], r.googKey, r.authorization])).toEqual([
      ['/youtube/v3/channels', 'instance-youtube-key', undefined],
      ['/youtube/v3/redirect/302', 'instance-youtube-key', undefined],
      ['/yt/watch', undefined, undefined],
      ['/yt/watch', undefined, undefined],
    ]);
    // The transcript endpoint is the operator's for transcripts only.
    await expect(get(youtube, local('/yt/watch'))).rejects.toThrow(/OUTBOUND_ALLOW_PRIVATE/);
    await expect(get(youtube, local('/elsewhere'), 'youtubeTranscripts')).rejects.toThrow(/OUTBOUND_ALLOW_PRIVATE/);
  });
});

describe('failures', () => {
  it('name a connection that fails by its code, and a slow server by the time waited', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(get(settings(['*']), `http://127.0.0.1:${closedPort}/`)).rejects.toThrow(new OutboundUnreachableError('the connection failed (ECONNREFUSED)'));
    const slow = http.createServer(() => undefined);
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`;
      await expect(outboundFetch(settings(['*']), url, { timeoutMs: 200 })).rejects.toThrow(new OutboundUnreachableError('no answer within 200 ms'));
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });

  it('stop reading a body at the timeout, unless it is streamed; the caller can end either', async () => {
    const url = `http://127.0.0.1:${port}/trickle`;
    const whole = await outboundFetch(settings(['*']), url, { timeoutMs: 150 });
    await expect(whole.text()).rejects.toThrow();
    const streamed = await outboundFetch(settings(['*']), url, { timeoutMs: 150, streaming: true });
    expect(await streamed.text()).toBe('first second');

    const caller = new AbortController();
    const cancelled = await outboundFetch(settings(['*']), url, { timeoutMs: 5000, streaming: true, signal: caller.signal });
    const reading = cancelled.text();
    caller.abort();
    await expect(reading).rejects.toThrow();
    await expect(outboundFetch(settings(['*']), url, { timeoutMs: 5000, signal: caller.signal })).rejects.toThrow(
      new OutboundUnreachableError('the request was cancelled'),
    );
  });
});
