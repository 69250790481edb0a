// The service's configuration: one typed object read from the environment once, at start.
import path from 'node:path';
import { z } from 'zod';
import { parseAllowList, type OutboundSettings } from './engines/outbound.js';

const optionalText = z.string().trim().min(1).optional();
const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL starting with ${protocols.map((p) => p + '//').join(' or ')}`,
    );

const schema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8090),
    HOST: z.string().trim().min(1).default('0.0.0.0'),
    DATA_DIR: z.string().trim().min(1).default('./data'),
    ADMIN_API_KEY: z.string().trim().min(16, 'must be at least 16 characters long').optional(),
    JSON_BODY_LIMIT: z
      .string()
      .trim()
      .regex(/^\d+(b|kb|mb|gb)$/i, 'must be a size such as 512kb or 16mb')
      .default('16mb'),
    FILE_UPLOAD_LIMIT: z
      .string()
      .trim()
      .regex(/^\d+(b|kb|mb|gb)$/i, 'must be a size such as 512mb or 1gb')
      .default('1gb'),
    PUBLIC_URL: url(['http:', 'https:']).optional(),
    DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
    TYPESENSE_URL: url(['http:', 'https:']).optional(),
    TYPESENSE_API_KEY: optionalText,
    TYPESENSE_COLLECTION: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]+$/, 'may hold letters, digits, _ and - only')
      .default('chunks'),
    TEMPORAL_ADDRESS: z
      .string()
      .trim()
      .regex(/^[^\s:/]+:\d+$/, 'must be host:port')
      .optional(),
    TEMPORAL_NAMESPACE: z.string().trim().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default('chunk-service'),
    DEFAULT_EMBEDDER: z.enum(['auto', 'local', 'builtin'], { message: 'must be auto, local or builtin' }).default('auto'),
    EMBEDDING_BASE_URL: url(['http:', 'https:']).optional(),
    EMBEDDING_API_KEY: optionalText,
    RERANKER_BASE_URL: url(['http:', 'https:']).optional(),
    RERANKER_API_KEY: optionalText,
    LLM_BASE_URL: url(['http:', 'https:']).optional(),
    LLM_API_KEY: optionalText,
    LLM_DEFAULT_MODEL: optionalText,
    OUTBOUND_ALLOW_PRIVATE: z
      .string()
      .transform((v, ctx) => {
        try {
          return parseAllowList(v);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: `${(error as Error).message}; list addresses, CIDR ranges or host names, separated by commas, or *` });
          return z.NEVER;
        }
      })
      .optional(),
    CRAWL_REQUESTS_PER_SECOND: z.coerce
      .number({ message: 'must be a number of requests per second, such as 2 or 0.5' })
      .min(0.1, 'must be at least 0.1 (one request every 10 seconds)')
      .max(1000, 'must be at most 1000')
      .default(2),
    ANALYTICS_CLUSTER_INTERVAL: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^(off|\d+(m|h|d))$/, 'must be off or a duration in minutes, hours or days, such as 30m, 6h or 1d')
      .refine((v) => v === 'off' || !/^\d+[mhd]$/.test(v) || durationMs(v) >= 60_000, 'must be at least 1m')
      .default('1d'),
    YOUTUBE_API_KEY: optionalText,
    YOUTUBE_API_BASE_URL: url(['http:', 'https:']).default('https://www.googleapis.com/youtube/v3'),
    YOUTUBE_TRANSCRIPT_BASE_URL: url(['http:', 'https:']).default('https://www.youtube.com'),
    URL_SIGNING_SECRET: z.string().trim().min(32, 'must be at least 32 characters long').optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((env, ctx) => {
    if (env.TYPESENSE_URL && !env.TYPESENSE_API_KEY) {
      ctx.addIssue({ code: 'custom', path: ['TYPESENSE_API_KEY'], message: 'is required when TYPESENSE_URL is set' });
    }
    // An instance key is sent only to the endpoint it belongs to, which must therefore be named.
    for (const kind of ['EMBEDDING', 'RERANKER', 'LLM'] as const) {
      if (env[`${kind}_API_KEY`] && !env[`${kind}_BASE_URL`]) {
        ctx.addIssue({
          code: 'custom',
          path: [`${kind}_API_KEY`],
          message: `is sent only to ${kind}_BASE_URL, the endpoint it belongs to; set ${kind}_BASE_URL too`,
        });
      }
    }
  });

export type Env = z.infer<typeof schema>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  adminApiKey: string | null;
  /**
   * Requests to URLs that configuration names: the operator's own embedding, reranking and LLM
   * endpoints with their keys, and the private addresses tenants' URLs may reach.
   */
  outbound: OutboundSettings;
  /** How crawls treat the sites they read. */
  crawl: CrawlSettings;
  /** How often datasets' recent searches are clustered into topics (ANALYTICS_CLUSTER_INTERVAL); null: never. */
  searchClusterIntervalMs: number | null;
  /** The model of LLM_BASE_URL that a dataset naming none uses. */
  llmDefaultModel: string | null;
  /** Signs file links and crawl secrets instead of the secret kept in the database; null: that one. */
  urlSigningSecret: string | null;
  jsonBodyLimit: string;
  /** The largest file an upload may carry, in bytes. */
  fileUploadLimit: number;
  /**
   * Where clients reach the service, the base of the signed file URLs it hands out; when null,
   * the address it listens on (set at listen).
   */
  publicUrl: string | null;
  logLevel: Env['LOG_LEVEL'];
  /**
   * The embedder of new datasets that name no endpoint: `local` the local model, `builtin` the
   * hashing embedder, `auto` the local model when it is installed and runs, else the hashing one.
   */
  defaultEmbedder: Env['DEFAULT_EMBEDDER'];
  store: { kind: 'pglite'; dir: string } | { kind: 'postgres'; url: string };
  lexical: { kind: 'postgres' } | { kind: 'typesense'; url: string; apiKey: string; collection: string };
  workflows: { kind: 'in-process' } | { kind: 'temporal'; address: string; namespace: string; taskQueue: string };
}

export interface CrawlSettings {
  /** Between the end of one request to a site and the start of the next (from CRAWL_REQUESTS_PER_SECOND). */
  minDelayMs: number;
}

export class ConfigError extends Error {}

/** Reads the configuration from an environment; a wrong value throws a ConfigError naming the variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const picked = Object.fromEntries(Object.keys(schema.shape).flatMap((k) => (source[k] === undefined || source[k] === '' ? [] : [[k, source[k]]])));
  const parsed = schema.safeParse(picked);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const env = parsed.data;
  const dataDir = path.resolve(env.DATA_DIR);
  return {
    port: env.PORT,
    host: env.HOST,
    dataDir,
    adminApiKey: env.ADMIN_API_KEY ?? null,
    outbound: {
      allowPrivate: env.OUTBOUND_ALLOW_PRIVATE ?? [],
      embedding: env.EMBEDDING_BASE_URL ? { baseUrl: env.EMBEDDING_BASE_URL, apiKey: env.EMBEDDING_API_KEY ?? null } : null,
      reranker: env.RERANKER_BASE_URL ? { baseUrl: env.RERANKER_BASE_URL, apiKey: env.RERANKER_API_KEY ?? null } : null,
      llm: env.LLM_BASE_URL ? { baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY ?? null } : null,
      // Google's APIs take a key in this header: it stays out of URLs, which errors may quote.
      youtube: env.YOUTUBE_API_KEY ? { baseUrl: env.YOUTUBE_API_BASE_URL, apiKey: env.YOUTUBE_API_KEY, keyHeader: 'x-goog-api-key' } : null,
      youtubeTranscripts: { baseUrl: env.YOUTUBE_TRANSCRIPT_BASE_URL, apiKey: null },
    },
    crawl: { minDelayMs: 1000 / env.CRAWL_REQUESTS_PER_SECOND },
    searchClusterIntervalMs: env.ANALYTICS_CLUSTER_INTERVAL === 'off' ? null : durationMs(env.ANALYTICS_CLUSTER_INTERVAL),
    llmDefaultModel: env.LLM_DEFAULT_MODEL ?? null,
    urlSigningSecret: env.URL_SIGNING_SECRET ?? null,
    jsonBodyLimit: env.JSON_BODY_LIMIT,
    fileUploadLimit: sizeInBytes(env.FILE_UPLOAD_LIMIT),
    publicUrl: env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, '') : null,
    logLevel: env.LOG_LEVEL,
    defaultEmbedder: env.DEFAULT_EMBEDDER,
    store: env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL } : { kind: 'pglite', dir: path.join(dataDir, 'pglite') },
    lexical: env.TYPESENSE_URL
      ? { kind: 'typesense', url: env.TYPESENSE_URL, apiKey: env.TYPESENSE_API_KEY!, collection: env.TYPESENSE_COLLECTION }
      : { kind: 'postgres' },
    workflows: env.TEMPORAL_ADDRESS
      ? { kind: 'temporal', address: env.TEMPORAL_ADDRESS, namespace: env.TEMPORAL_NAMESPACE, taskQueue: env.TEMPORAL_TASK_QUEUE }
      : { kind: 'in-process' },
  };
}

/** The variables that hold secrets; DATABASE_URL's password is one too. */
const SECRET_VARIABLES = [
  'ADMIN_API_KEY',
  'EMBEDDING_API_KEY',
  'RERANKER_API_KEY',
  'LLM_API_KEY',
  'YOUTUBE_API_KEY',
  'TYPESENSE_API_KEY',
  'URL_SIGNING_SECRET',
] as const;

/** The secret values an environment holds, for the logger to strip from every line it writes. */
export function secretValues(source: NodeJS.ProcessEnv = process.env): string[] {
  const values: string[] = SECRET_VARIABLES.flatMap((name) => (source[name]?.trim() ? [source[name]!.trim()] : []));
  try {
    const password = source.DATABASE_URL ? new URL(source.DATABASE_URL).password : '';
    if (password) values.push(password, decodeURIComponent(password));
  } catch {
    // Not a URL: loadConfig refuses it.
  }
  return [...new Set(values)];
}

/** `512kb`, `16mb`, `1gb`: binary multiples, as the JSON body parser reads JSON_BODY_LIMIT. */
export function sizeInBytes(size: string): number {
  const [, digits, unit] = /^(\d+)(b|kb|mb|gb)$/i.exec(size.trim())!;
  return Number(digits) * 1024 ** ['b', 'kb', 'mb', 'gb'].indexOf(unit.toLowerCase());
}

/** A duration such as 30m, 6h or 1d in milliseconds. */
function durationMs(value: string): number {
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[value.slice(-1) as 'm' | 'h' | 'd'];
  return Number(value.slice(0, -1)) * unit;
}
