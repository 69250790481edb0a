// A PostgreSQL that goes into recovery under a running service: requests get 503 naming the
// database (never 401, whatever the caller's key), health says so, and the service recovers with
// the database. Between the service and the real server sits a TCP relay that, while "in
// recovery", closes every connection and answers new ones as PostgreSQL does then: an
// ErrorResponse with SQLSTATE 57P03.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { startService, type RunningService } from '../../server/main.js';
import { mode, testEnvironment } from '../support/env.js';

const ADMIN = 'test-admin-key-0123456789';

/** A PostgreSQL ErrorResponse message (protocol 3.0) with the given fields. */
function errorResponse(fields: Record<string, string>): Buffer {
  const body = Buffer.concat([...Object.entries(fields).map(([k, v]) => Buffer.from(`${k}${v}\0`)), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function relay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let inRecovery = false;
  const server = net.createServer((client) => {
    if (inRecovery) {
      client.once('data', () => client.end(errorResponse({ S: 'FATAL', V: 'FATAL', C: '57P03', M: 'the database system is in recovery mode' })));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  return {
    listen: () => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))),
    recovery(on: boolean) {
      inRecovery = on;
      if (on) for (const s of sockets) s.destroy();
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(mode !== 'full')('a database in recovery', () => {
  let service: RunningService;
  let proxy: ReturnType<typeof relay>;
  let organizationId: string;
  let key: string;

  const call = async (path: string, apiKey: string, headers: Record<string, string> = {}) => {
    const response = await fetch(service.url + path, { headers: { authorization: apiKey, ...headers } });
    return { status: response.status, body: (await response.json()) as { message?: string } };
  };

  beforeAll(async () => {
    const env = await testEnvironment();
    const url = new URL(env.DATABASE_URL);
    // By TCP through the relay, not by the server's unix socket.
    url.searchParams.delete('host');
    proxy = relay({ host: url.hostname, port: Number(url.port) });
    url.port = String(await proxy.listen());
    service = await startService(loadConfig({ ...env, DATABASE_URL: url.toString() }));
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(service.url + path, {
        method: 'POST',
        headers: { authorization: ADMIN, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, any>;
    };
    organizationId = (await post('/api/organization', { name: 'outage' })).id;
    key = (await post('/api/organization/api_key', { name: 'owner', role: 2 }, { 'SVC-Organization': organizationId })).api_key;
  });

  afterAll(async () => {
    await service?.stop();
    await proxy?.close();
  });

  it('answers 503 naming the database, not 401, and recovers with it', async () => {
    proxy.recovery(true);
    // The organization key is looked up in the database: its failure is not the caller's fault.
    const byKey = await call(`/api/organization/${organizationId}`, key, { 'SVC-Organization': organizationId });
    expect(byKey.status).toBe(503);
    // The first query may run on a pooled connection the relay just cut.
    expect(byKey.body.message).toMatch(/^the database is unavailable \((no connection|it is in recovery)\)/);
    const byAdmin = await call(`/api/organization/${organizationId}`, ADMIN, { 'SVC-Organization': organizationId });
    expect(byAdmin).toEqual({ status: 503, body: { message: 'the database is unavailable (it is in recovery); try again shortly' } });
    const health = await call('/api/health', ADMIN);
    expect(health.status).toBe(503);
    expect(health.body.message).toMatch(/the database \(postgres\)/);

    proxy.recovery(false);
    const again = await call(`/api/organization/${organizationId}`, key, { 'SVC-Organization': organizationId });
    expect(again.status).toBe(200);
  });
});
