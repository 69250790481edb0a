// Every request the service sends to a URL that configuration names (embedding, reranking and LLM
// endpoints, webhooks, crawled sites, the YouTube API) goes through outboundFetch, which holds two rules:
//
// - The instance's own keys (EMBEDDING_API_KEY, RERANKER_API_KEY, LLM_API_KEY, YOUTUBE_API_KEY) go
//   only to the endpoint the operator configured them for (EMBEDDING_BASE_URL, RERANKER_BASE_URL,
//   LLM_BASE_URL, YOUTUBE_API_BASE_URL): a request is given a key only when its URL lies under that
//   endpoint, checked again at every redirect. Those endpoints (and YOUTUBE_TRANSCRIPT_BASE_URL,
//   which takes no key) are reached wherever they are, for the use they are configured for.
// - Any other URL is a tenant's choice, so it may not reach private, loopback, link-local or other
//   non-public addresses unless OUTBOUND_ALLOW_PRIVATE allows them. The check is made where the
//   connection is made: on every address a host name resolves to (before connecting) and on the
//   address the socket actually connected to, so a name that resolves differently later (DNS
//   rebinding) gains nothing; redirects are followed here, one checked hop at a time.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch, type Response } from 'undici';

export type { Response as OutboundResponse } from 'undici';

/** An endpoint the operator configured, with the key that belongs to it. */
export interface InstanceEndpoint {
  baseUrl: string;
  apiKey: string | null;
  /** The header that carries the key as it is; when absent, `authorization: Bearer <key>`. */
  keyHeader?: string;
}

export interface OutboundSettings {
  /** OUTBOUND_ALLOW_PRIVATE: addresses, CIDR ranges and host names, or `*` for every one. */
  allowPrivate: readonly string[];
  /** EMBEDDING_BASE_URL with EMBEDDING_API_KEY. */
  embedding: InstanceEndpoint | null;
  /** RERANKER_BASE_URL with RERANKER_API_KEY. */
  reranker: InstanceEndpoint | null;
  /** LLM_BASE_URL with LLM_API_KEY. */
  llm: InstanceEndpoint | null;
  /** YOUTUBE_API_BASE_URL with YOUTUBE_API_KEY; null (or absent) when no key is configured. */
  youtube?: InstanceEndpoint | null;
  /** YOUTUBE_TRANSCRIPT_BASE_URL: where YouTube's pages and caption tracks are read. */
  youtubeTranscripts?: InstanceEndpoint | null;
}

/** The uses an instance endpoint is configured for. */
export type Credential = 'embedding' | 'reranker' | 'llm' | 'youtube' | 'youtubeTranscripts';

/** Refuses every non-public address and knows no instance endpoint. */
export const STRICT_OUTBOUND: OutboundSettings = Object.freeze({ allowPrivate: [], embedding: null, reranker: null, llm: null });

export const ALLOW_PRIVATE_SETTING = 'OUTBOUND_ALLOW_PRIVATE';

/** The request was not sent: the target is not allowed, or it redirected too often or elsewhere than http(s). */
export class OutboundRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefusedError';
  }
}

/** No answer: the connection failed or the time ran out. The same request may succeed later. */
export class OutboundUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundUnreachableError';
  }
}

export interface OutboundInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Text, or bytes (a multipart upload). */
  body?: string | Uint8Array;
  /** For the whole exchange, redirects included; with `streaming`, until the answer's headers. */
  timeoutMs: number;
  /** The body is read as it comes, for as long as it takes (a model's streamed answer). */
  streaming?: boolean;
  /** Ends the exchange, the body's reading included (the caller went away). */
  signal?: AbortSignal;
  /** The use: under this instance endpoint, the URL gets its key and may be a private address. */
  credential?: Credential;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * fetch with the rules above. Answers whatever status the server gives (redirects followed);
 * throws OutboundRefusedError or OutboundUnreachableError when there is no answer to give.
 */
export async function outboundFetch(settings: OutboundSettings, url: string | URL, init: OutboundInit): Promise<Response> {
  const policy = policyOf(settings);
  // Ends the exchange: the caller's signal, or the time running out (with `streaming`, only until
  // the headers are in: a streamed answer is read for as long as it takes).
  const ended = new AbortController();
  const timer = setTimeout(() => ended.abort(new DOMException(`no answer within ${init.timeoutMs} ms`, 'TimeoutError')), init.timeoutMs);
  timer.unref();
  if (init.signal?.aborted) ended.abort(init.signal.reason);
  else init.signal?.addEventListener('abort', () => ended.abort(init.signal?.reason), { once: true });
  const signal = ended.signal;
  let target = httpUrl(url);
  let method = init.method ?? 'GET';
  let body = init.body;
  const sent: Record<string, string> = { ...init.headers };
  for (let hop = 0; ; hop++) {
    const headers = { ...sent };
    const endpoint = init.credential ? (settings[init.credential] ?? null) : null;
    const key = keyFor(endpoint, target);
    if (key && endpoint?.keyHeader) headers[endpoint.keyHeader] = key;
    else if (key) headers.authorization = `Bearer ${key}`;
    // The operator's endpoint is trusted for what it serves only: not as a webhook's target.
    const trusted = under(endpoint, target);
    let response: Response;
    try {
      response = await fetch(target, { method, headers, body, redirect: 'manual', signal, dispatcher: trusted ? policy.open : policy.guarded });
    } catch (error) {
      throw init.signal?.aborted ? new OutboundUnreachableError('the request was cancelled') : failureOf(error, init.timeoutMs);
    }
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || !location) {
      if (init.streaming) clearTimeout(timer);
      return response;
    }
    await response.body?.cancel();
    if (hop === MAX_REDIRECTS) throw new OutboundRefusedError(`redirected more than ${MAX_REDIRECTS} times`);
    target = httpUrl(new URL(location, target), true);
    // As fetch does: 303, and 301/302 after a POST, continue as a GET without the body.
    if (response.status === 303 || (method === 'POST' && response.status !== 307 && response.status !== 308)) {
      method = 'GET';
      body = undefined;
      delete sent['content-type'];
    }
  }
}

/** Checks OUTBOUND_ALLOW_PRIVATE's entries; returns them, or throws naming the first bad one. */
export function parseAllowList(text: string): string[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) compileEntry(entry);
  return entries;
}

/** Why an address may not be reached (null: it may). */
export function refusalOf(settings: OutboundSettings, address: string, hostname?: string): string | null {
  return policyOf(settings).refusal(address, hostname);
}

// ---------------------------------------------------------------------------------------------

interface Policy {
  refusal(address: string, hostname?: string): string | null;
  /** Checks every connection; for tenants' URLs. */
  guarded: Agent;
  /** For the operator's own endpoints. */
  open: Agent;
}

type Entry = { kind: 'any' } | { kind: 'range'; range: [ipaddr.IPv4 | ipaddr.IPv6, number] } | { kind: 'name'; name: string };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

function compileEntry(entry: string): Entry {
  if (entry === '*') return { kind: 'any' };
  if (entry.includes('/')) {
    try {
      return { kind: 'range', range: ipaddr.parseCIDR(entry) };
    } catch {
      throw new Error(`${entry} is not a CIDR range`);
    }
  }
  if (ipaddr.isValid(entry)) {
    const address = ipaddr.process(entry);
    return { kind: 'range', range: [address, address.kind() === 'ipv4' ? 32 : 128] };
  }
  if (HOST_NAME.test(entry)) return { kind: 'name', name: entry.toLowerCase() };
  throw new Error(`${entry} is neither an address, a CIDR range nor a host name`);
}

const policies = new WeakMap<OutboundSettings, Policy>();

function policyOf(settings: OutboundSettings): Policy {
  let policy = policies.get(settings);
  if (policy) return policy;
  const entries = settings.allowPrivate.map(compileEntry);
  const any = entries.some((e) => e.kind === 'any');
  const names = new Set(entries.flatMap((e) => (e.kind === 'name' ? [e.name] : [])));
  const ranges = entries.flatMap((e) => (e.kind === 'range' ? [e.range] : []));
  const refusal = (address: string, hostname?: string): string | null => {
    if (any || (hostname && names.has(hostname.toLowerCase()))) return null;
    if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
    // IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
    const ip = ipaddr.process(address);
    const range = ip.range();
    if (range === 'unicast') return null;
    if (ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return null;
    return `${address} is a ${range} address, which the service reaches only when ${ALLOW_PRIVATE_SETTING} allows it`;
  };
  policy = { refusal, guarded: new Agent({ connect: guardedConnector(refusal) }), open: new Agent() };
  policies.set(settings, policy);
  return policy;
}

function guardedConnector(refusal: Policy['refusal']): buildConnector.connector {
  // Every address a name resolves to is checked before any connection is tried.
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.map((a) => refusal(a.address, hostname)).find(Boolean);
      if (refused) return callback(new OutboundRefusedError(`${hostname}: ${refused}`), '', 0);
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
  const connect = buildConnector({ lookup });
  return (options, callback) => {
    const { hostname } = options;
    // An address in the URL is never looked up: check it before connecting.
    const literal = isIP(hostname) ? refusal(hostname) : null;
    if (literal) return callback(new OutboundRefusedError(literal), null);
    connect(options, (error, socket) => {
      if (error) return callback(error, null);
      // The address actually connected to, whatever resolved it.
      const refused = refusal(socket.remoteAddress ?? '', hostname);
      if (refused) {
        socket.destroy();
        return callback(new OutboundRefusedError(`${hostname}: ${refused}`), null);
      }
      callback(null, socket);
    });
  };
}

/** The URL to request; a redirect's target is not named in errors: it is the server's words. */
function httpUrl(url: string | URL, redirected = false): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OutboundRefusedError('not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OutboundRefusedError(redirected ? 'redirected to a URL that is not http or https' : 'not an http or https URL');
  }
  return parsed;
}

function under(endpoint: InstanceEndpoint | null, target: URL): boolean {
  if (!endpoint) return false;
  const base = new URL(endpoint.baseUrl);
  const path = base.pathname.replace(/\/+$/, '');
  return base.origin === target.origin && (target.pathname === path || target.pathname.startsWith(path + '/'));
}

function keyFor(endpoint: InstanceEndpoint | null, target: URL): string | null {
  return endpoint?.apiKey && under(endpoint, target) ? endpoint.apiKey : null;
}

/** fetch's failure as one of ours; only fixed descriptions and error codes, never a server's words. */
function failureOf(error: unknown, timeoutMs: number): Error {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof OutboundRefusedError) return cause;
  if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError')
    return new OutboundUnreachableError(`no answer within ${timeoutMs} ms`);
  // An error code, else the HTTP client's own description (such as "bad port"), never a reply.
  const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
  const why = typeof code === 'string' ? code : typeof message === 'string' && message ? message : null;
  return new OutboundUnreachableError(why ? `the connection failed (${why})` : 'the connection failed');
}
