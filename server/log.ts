// The service's logger. No secret may reach a log line, so three layers stand in the way:
// - `redact` blanks the fields that carry secrets (the Authorization and cookie headers, signed
//   links' signatures, webhook secrets, API keys in bodies or answers, should one be logged);
// - the request serializer of pino-http (httpLogOptions) logs URLs without their signatures;
// - every line written is scrubbed of the instance's secret values (ADMIN_API_KEY, the
//   EMBEDDING/RERANKER/TYPESENSE keys, the database password) and of anything shaped like a
//   service API key or a signature parameter, wherever in the line it sits (messages, stacks).
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Options as HttpLoggerOptions } from 'pino-http';
import pretty from 'pino-pretty';
import { secretValues, type Config } from './config.js';

const REDACTED = '[Redacted]';

/** Query parameters that carry a secret: signed links' signatures and crawl webhook secrets. */
const SECRET_PARAMS = ['signature', 'webhook_secret', 'crawlWebhookSecret', 'api_key'];

/** Structured fields that carry secrets (pino's paths: `*` is one level of any name). */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  ...SECRET_PARAMS.map((p) => `req.query.${p}`),
  'req.body.metadata.webhook_secret',
  'req.body.api_key',
  'res.body.api_key',
  ...['api_key', 'apiKey', 'authorization', 'webhook_secret', 'crawlWebhookSecret', 'signature'].flatMap((f) => [f, `*.${f}`]),
];

/** A service API key (`svc_` and 43 characters), whatever field or message holds it. */
const SERVICE_KEY = /svc_[A-Za-z0-9_-]{20,}/g;
const SIGNATURE_PARAM = new RegExp(`([?&](?:${SECRET_PARAMS.join('|')})=)[^&\\s"#]*`, 'g');
/** Shorter values are left: they would match ordinary words, and would be no secret anyway. */
const MIN_SCRUBBED_LENGTH = 12;

export interface LoggerOptions {
  /** Values never to write; by default the secrets of the environment the configuration is read from. */
  secrets?: readonly string[];
  /** Where lines go; standard output by default. */
  destination?: DestinationStream;
}

export function createLogger(level: Config['logLevel'], options: LoggerOptions = {}): Logger {
  const scrub = scrubber(options.secrets ?? secretValues());
  const settings = { level, redact: { paths: REDACT_PATHS, censor: REDACTED }, hooks: { streamWrite: scrub } };
  // A person at a terminal reads lines; anything else (files, collectors) gets JSON.
  const destination = options.destination ?? (process.stdout.isTTY ? pretty({ translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }) : undefined);
  return destination ? pino(settings, destination) : pino(settings);
}

/** pino-http's options: requests are logged with their URL and query stripped of secrets. */
export const httpLogOptions: Pick<HttpLoggerOptions, 'serializers'> = {
  serializers: {
    req: (req: { url?: string; query?: unknown }) => ({ ...req, url: req.url && withoutSecretParams(req.url), query: withoutSecretFields(req.query) }),
  },
};

/** A URL (or path) with the values of its secret parameters replaced. */
export function withoutSecretParams(url: string): string {
  return url.replace(SIGNATURE_PARAM, `$1${REDACTED}`);
}

function withoutSecretFields(query: unknown): unknown {
  if (!query || typeof query !== 'object') return query;
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, SECRET_PARAMS.includes(k) ? REDACTED : v]));
}

function scrubber(secrets: readonly string[]): (line: string) => string {
  // Each value as written raw and as escaped inside a JSON string.
  const values = [...new Set(secrets.filter((s) => s.length >= MIN_SCRUBBED_LENGTH).flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))];
  return (line) => {
    let out = line.replace(SERVICE_KEY, REDACTED).replace(SIGNATURE_PARAM, `$1${REDACTED}`);
    for (const value of values) out = out.replaceAll(value, REDACTED);
    return out;
  };
}
