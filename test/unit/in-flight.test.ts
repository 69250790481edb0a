// Requests are counted while the service answers them, and no longer once the answer is sent or the
// client has gone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InFlight } from '../../server/http/inFlight.js';

const inFlight = new InFlight();
let release: () => void = () => {};
const server = http.createServer((req, res) => {
  inFlight.track(res);
  if (req.url === '/hold') release = () => res.end('held');
  else res.end('now');
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

const settled = async (count: number) => {
  for (let i = 0; i < 100 && inFlight.count !== count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return inFlight.count;
};

it('counts a request until its answer is sent', async () => {
  expect(await (await fetch(`${base}/now`)).text()).toBe('now');
  expect(await settled(0)).toBe(0);
  const held = fetch(`${base}/hold`);
  expect(await settled(1)).toBe(1);
  release();
  expect(await (await held).text()).toBe('held');
  expect(await settled(0)).toBe(0);
});

it('stops counting a request whose client went away', async () => {
  const aborted = new AbortController();
  const held = fetch(`${base}/hold`, { signal: aborted.signal }).catch(() => null);
  expect(await settled(1)).toBe(1);
  aborted.abort();
  await held;
  expect(await settled(0)).toBe(0);
});
