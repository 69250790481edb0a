// The HTTP server's connection handling: keep-alive sockets outlive common client idle times (Node's
// default of 5 s closed them under clients about to reuse them), and stop() closes idle connections
// at once while a request in flight still gets its answer, with `Connection: close`; a request Node
// refuses itself (headers over its limit) gets a JSON `{message}` like every other error.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { startService, type RunningService } from '../../server/main.js';
import { testEnvironment } from '../support/env.js';

const ADMIN = 'test-admin-key-0123456789';
let service: RunningService | undefined;

beforeAll(async () => {
  service = await startService(loadConfig(await testEnvironment()));
});
afterAll(async () => {
  await service?.stop();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  reusedSocket: boolean;
  socketClosed: Promise<void>;
}

function send(agent: http.Agent, method: string, path: string, body?: { first: string; rest: string; between?: () => Promise<void> }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: ADMIN };
    if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body.first + body.rest)) });
    const req = http.request(`${service!.url}${path}`, { method, agent, headers });
    req.on('error', reject);
    req.on('response', (res) => {
      const socketClosed = new Promise<void>((done) => res.socket.once('close', () => done()));
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, reusedSocket: req.reusedSocket, socketClosed }));
    });
    if (!body) return req.end();
    req.write(body.first);
    void (body.between ?? (async () => {}))().then(() => req.end(body.rest), reject);
  });
}

describe('HTTP connections', () => {
  it('announces a keep-alive of 75 s and keeps a socket idle for 6 s open for the next request', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await send(agent, 'GET', '/api/health');
      expect(first.status).toBe(200);
      expect(first.headers['keep-alive']).toBe('timeout=75');
      await new Promise((r) => setTimeout(r, 6_000));
      const second = await send(agent, 'GET', '/api/health');
      expect(second.status).toBe(200);
      expect(second.reusedSocket).toBe(true);
    } finally {
      agent.destroy();
    }
  });

  it('answers headers over the limit with 431 and a JSON message', async () => {
    const { port } = new URL(service!.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => (answer += d));
    socket.write(`GET /api/health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'x'.repeat(20_000)}\r\n\r\n`);
    await new Promise((resolve) => socket.once('close', resolve));
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(body).message).toMatch(/headers are over the size limit/);
  });

  it('stop() closes idle connections at once and answers a request in flight with Connection: close', async () => {
    const idleAgent = new http.Agent({ keepAlive: true });
    const busyAgent = new http.Agent({ keepAlive: true });
    try {
      const idle = await send(idleAgent, 'GET', '/api/health');
      expect(idle.headers.connection).toBe('keep-alive');
      let stopped: Promise<void> | undefined;
      let stoppedAt = 0;
      const t0 = Date.now();
      // The request's headers and half its body are sent; the service is stopped; then the rest.
      const inFlight = await send(busyAgent, 'POST', '/api/organization', {
        first: '{"name": "Answered while ',
        rest: 'stopping"}',
        between: async () => {
          await new Promise((r) => setTimeout(r, 200));
          stopped = service!.stop().then(() => void (stoppedAt = Date.now()));
          await idle.socketClosed; // the idle connection is closed without waiting for its keep-alive
        },
      });
      expect(inFlight.status).toBe(200);
      expect(JSON.parse(inFlight.body).name).toBe('Answered while stopping');
      expect(inFlight.headers.connection).toBe('close');
      await inFlight.socketClosed;
      await stopped;
      service = undefined;
      expect(stoppedAt - t0).toBeLessThan(5_000);
    } finally {
      idleAgent.destroy();
      busyAgent.destroy();
    }
  });
});
