// Configuration: defaults, engine choice, and a start refused with the variable named.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.js';
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
