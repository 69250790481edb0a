// Configuration: defaults, engine choice, and a start refused with the variable named.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, secretValues } from '../../server/config.js';
import { projectPath } from '../../scripts/contract/paths.js';

describe('loadConfig', () => {
  it('defaults to the embedded engines on port 8090 under ./data', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8090);
    expect(config.dataDir).toBe(path.resolve('data'));
    expect(config.store.kind).toBe('pglite');
    expect(config.lexical.kind).toBe('postgres');
    expect(config.workflows.kind).toBe('in-process');
    expect(config.adminApiKey).toBeNull();
    expect(config.fileUploadLimit).toBe(1024 ** 3);
    expect(config.publicUrl).toBeNull();
    expect(config.outbound).toEqual({
      allowPrivate: [],
      embedding: null,
      reranker: null,
      llm: null,
      youtube: null,
      youtubeTranscripts: { baseUrl: 'https://www.youtube.com', apiKey: null },
    });
  });

  it('binds the instance keys to the endpoints the operator names, and reads the private addresses allowed', () => {
    const config = loadConfig({
      EMBEDDING_BASE_URL: 'https://embed.example.com/v1',
      EMBEDDING_API_KEY: 'embed-key',
      RERANKER_BASE_URL: 'http://10.0.0.5:8080',
      LLM_BASE_URL: 'https://llm.example.com/v1',
      LLM_API_KEY: 'llm-key',
      LLM_DEFAULT_MODEL: 'small-model',
      OUTBOUND_ALLOW_PRIVATE: ' 127.0.0.1, 10.0.0.0/8 ,fd00::/8,embeddings.internal ',
    });
    expect(config.outbound).toEqual({
      allowPrivate: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'embeddings.internal'],
      embedding: { baseUrl: 'https://embed.example.com/v1', apiKey: 'embed-key' },
      reranker: { baseUrl: 'http://10.0.0.5:8080', apiKey: null },
      llm: { baseUrl: 'https://llm.example.com/v1', apiKey: 'llm-key' },
      youtube: null,
      youtubeTranscripts: { baseUrl: 'https://www.youtube.com', apiKey: null },
    });
    expect(config.llmDefaultModel).toBe('small-model');
    expect(() => loadConfig({ LLM_API_KEY: 'llm-key' })).toThrow(/LLM_API_KEY.*LLM_BASE_URL/);
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: '*' }).outbound.allowPrivate).toEqual(['*']);
  });

  it('sends YOUTUBE_API_KEY to the YouTube Data API, in the header Google reads, and reads transcripts where told', () => {
    expect(loadConfig({ YOUTUBE_API_KEY: 'yt-key' }).outbound).toMatchObject({
      youtube: { baseUrl: 'https://www.googleapis.com/youtube/v3', apiKey: 'yt-key', keyHeader: 'x-goog-api-key' },
      youtubeTranscripts: { baseUrl: 'https://www.youtube.com', apiKey: null },
    });
    const standIn = loadConfig({
      YOUTUBE_API_KEY: 'yt-key',
      YOUTUBE_API_BASE_URL: 'http://127.0.0.1:9000/youtube/v3',
      YOUTUBE_TRANSCRIPT_BASE_URL: 'http://127.0.0.1:9000',
    }).outbound;
    expect(standIn.youtube?.baseUrl).toBe('http://127.0.0.1:9000/youtube/v3');
    expect(standIn.youtubeTranscripts?.baseUrl).toBe('http://127.0.0.1:9000');
    // Without a key, YouTube crawls are refused; the API's address alone changes nothing.
    expect(loadConfig({ YOUTUBE_API_BASE_URL: 'http://127.0.0.1:9000/youtube/v3' }).outbound.youtube).toBeNull();
  });

  it('lists the secret values of an environment, for the logger to strip', () => {
    expect(
      secretValues({
        ADMIN_API_KEY: 'admin-secret-123456',
        LLM_API_KEY: 'llm-secret',
        YOUTUBE_API_KEY: 'yt-secret',
        TYPESENSE_API_KEY: 'ts',
        DATABASE_URL: 'postgres://u:p%40ss@h/db',
        PORT: '1',
      }).sort(),
    ).toEqual(['admin-secret-123456', 'llm-secret', 'p%40ss', 'p@ss', 'ts', 'yt-secret']);
  });

  it('paces crawls at CRAWL_REQUESTS_PER_SECOND, two a second unless told', () => {
    expect(loadConfig({}).crawl).toEqual({ minDelayMs: 500 });
    expect(loadConfig({ CRAWL_REQUESTS_PER_SECOND: '0.5' }).crawl).toEqual({ minDelayMs: 2000 });
    expect(loadConfig({ CRAWL_REQUESTS_PER_SECOND: '1000' }).crawl).toEqual({ minDelayMs: 1 });
  });

  it('clusters searches every ANALYTICS_CLUSTER_INTERVAL, daily unless told, never when off', () => {
    expect(loadConfig({}).searchClusterIntervalMs).toBe(86_400_000);
    expect(loadConfig({ ANALYTICS_CLUSTER_INTERVAL: '6h' }).searchClusterIntervalMs).toBe(6 * 3_600_000);
    expect(loadConfig({ ANALYTICS_CLUSTER_INTERVAL: '30M' }).searchClusterIntervalMs).toBe(30 * 60_000);
    expect(loadConfig({ ANALYTICS_CLUSTER_INTERVAL: 'off' }).searchClusterIntervalMs).toBeNull();
  });

  it('reads the upload limit and the public address', () => {
    const config = loadConfig({ FILE_UPLOAD_LIMIT: '512mb', PUBLIC_URL: 'https://search.example.com/' });
    expect(config.fileUploadLimit).toBe(512 * 1024 ** 2);
    expect(config.publicUrl).toBe('https://search.example.com');
  });

  it('picks the real engines from their variables', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
      TYPESENSE_URL: 'http://127.0.0.1:8108',
      TYPESENSE_API_KEY: 'xyz',
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_TASK_QUEUE: 'q',
    });
    expect(config.store).toEqual({ kind: 'postgres', url: 'postgres://u:p@127.0.0.1:5432/db' });
    expect(config.lexical).toEqual({ kind: 'typesense', url: 'http://127.0.0.1:8108', apiKey: 'xyz', collection: 'chunks' });
    expect(config.workflows).toEqual({ kind: 'temporal', address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'q' });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ TYPESENSE_URL: 'http://127.0.0.1:8108' }, 'TYPESENSE_API_KEY'],
    [{ TEMPORAL_ADDRESS: 'localhost' }, 'TEMPORAL_ADDRESS'],
    [{ ADMIN_API_KEY: 'short' }, 'ADMIN_API_KEY'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ JSON_BODY_LIMIT: 'huge' }, 'JSON_BODY_LIMIT'],
    [{ FILE_UPLOAD_LIMIT: '1 gigabyte' }, 'FILE_UPLOAD_LIMIT'],
    [{ PUBLIC_URL: 'ftp://files.example' }, 'PUBLIC_URL'],
    [{ EMBEDDING_API_KEY: 'k' }, 'EMBEDDING_BASE_URL'],
    [{ RERANKER_API_KEY: 'k' }, 'RERANKER_BASE_URL'],
    [{ EMBEDDING_BASE_URL: 'localhost:8080' }, 'EMBEDDING_BASE_URL'],
    [{ OUTBOUND_ALLOW_PRIVATE: '10.0.0.0/33' }, 'OUTBOUND_ALLOW_PRIVATE'],
    [{ OUTBOUND_ALLOW_PRIVATE: 'http://127.0.0.1' }, 'OUTBOUND_ALLOW_PRIVATE'],
    [{ URL_SIGNING_SECRET: 'too-short' }, 'URL_SIGNING_SECRET'],
    [{ DEFAULT_EMBEDDER: 'minilm' }, 'DEFAULT_EMBEDDER'],
    [{ CRAWL_REQUESTS_PER_SECOND: 'fast' }, 'CRAWL_REQUESTS_PER_SECOND'],
    [{ CRAWL_REQUESTS_PER_SECOND: '0' }, 'CRAWL_REQUESTS_PER_SECOND'],
    [{ ANALYTICS_CLUSTER_INTERVAL: 'daily' }, 'ANALYTICS_CLUSTER_INTERVAL'],
    [{ ANALYTICS_CLUSTER_INTERVAL: '0m' }, 'ANALYTICS_CLUSTER_INTERVAL'],
    [{ YOUTUBE_API_BASE_URL: 'googleapis.com/youtube/v3' }, 'YOUTUBE_API_BASE_URL'],
    [{ YOUTUBE_TRANSCRIPT_BASE_URL: 'ftp://youtube.example' }, 'YOUTUBE_TRANSCRIPT_BASE_URL'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`\\b${name}\\b`));
  });

  it('a wrong value stops `npm start` with a message naming the variable', async () => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', projectPath('server/main.ts')], {
      env: { ...process.env, PORT: 'not-a-port' },
      cwd: projectPath(''),
    });
    await expect(run).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/PORT/) });
  });
});
