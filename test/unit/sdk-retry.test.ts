// The SDK's retries: which requests are sent again after a 429 or 503, how long it waits between
// tries, and that a wait ends when the caller aborts.
import { describe, expect, it } from 'vitest';
import { defaultRetryOptions, type RetryOptions, retryingFetch, waitBefore } from '../../sdk/src/retry.js';

const fast: RetryOptions = { ...defaultRetryOptions, minDelayMs: 1, maxDelayMs: 20 };

/** A transport answering the given statuses in turn (200 once they are used up), noting what it was sent. */
function transport(statuses: number[], headers: Record<string, string> = {}) {
  const sent: { method: string; body: string }[] = [];
  const send = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    sent.push({ method: request.method, body: await request.text() });
    return new Response(`answer ${sent.length}`, { status: statuses.shift() ?? 200, headers });
  }) as typeof fetch;
  return { send, sent };
}

describe('retryingFetch', () => {
  it('sends an idempotent request again until it is answered, with its body each time', async () => {
    const { send, sent } = transport([503, 429]);
    const response = await retryingFetch(send, fast)('http://service/api/chunk', { method: 'PUT', body: '{"chunk_id":"c"}' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('answer 3');
    expect(sent).toEqual(Array(3).fill({ method: 'PUT', body: '{"chunk_id":"c"}' }));
  });

  it('gives up after its retries, with the last answer', async () => {
    const { send, sent } = transport([503, 503, 503, 503, 503]);
    const response = await retryingFetch(send, { ...fast, retries: 2 })('http://service/api/health');
    expect(response.status).toBe(503);
    expect(sent).toHaveLength(3);
  });

  it('sends a POST once, unless told that it only reads', async () => {
    const once = transport([503]);
    expect((await retryingFetch(once.send, fast)('http://service/api/chunk', { method: 'POST', body: '{}' })).status).toBe(503);
    expect(once.sent).toHaveLength(1);

    const reads = transport([503]);
    expect((await retryingFetch(reads.send, fast, true)('http://service/api/chunk/search', { method: 'POST', body: '{}' })).status).toBe(200);
    expect(reads.sent).toHaveLength(2);
  });

  it('does not retry other statuses, nor at all with no retries', async () => {
    const refused = transport([500]);
    expect((await retryingFetch(refused.send, fast)('http://service/api/health')).status).toBe(500);
    expect(refused.sent).toHaveLength(1);

    const off = transport([503]);
    expect((await retryingFetch(off.send, { ...fast, retries: 0 })('http://service/api/health')).status).toBe(503);
    expect(off.sent).toHaveLength(1);
  });

  it('stops waiting when the request is aborted', async () => {
    const { send, sent } = transport([503], { 'retry-after': '60' });
    const abort = new AbortController();
    const began = Date.now();
    const pending = retryingFetch(send, { ...fast, maxDelayMs: 60_000 })('http://service/api/health', { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('the user left')), 50);
    await expect(pending).rejects.toThrow('the user left');
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(sent).toHaveLength(1);
  });
});

describe('waitBefore', () => {
  const busy = (retryAfter?: string) => new Response(null, { status: 503, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });

  it('waits as long as Retry-After says, in seconds or until a date, within the longest wait', () => {
    const options = { ...defaultRetryOptions, maxDelayMs: 10_000 };
    expect(waitBefore(0, busy('2'), options)).toBe(2_000);
    expect(waitBefore(0, busy('120'), options)).toBe(10_000);
    const inFive = new Date(Date.now() + 5_000).toUTCString();
    expect(waitBefore(0, busy(inFive), options)).toBeGreaterThan(3_000);
    expect(waitBefore(0, busy(inFive), options)).toBeLessThanOrEqual(5_000);
  });

  it('otherwise backs off exponentially with jitter: between half and all of min × 2^attempt', () => {
    const options = { ...defaultRetryOptions, minDelayMs: 100, maxDelayMs: 1_000 };
    for (let i = 0; i < 50; i++) {
      expect(waitBefore(0, busy(), options)).toBeGreaterThanOrEqual(50);
      expect(waitBefore(0, busy(), options)).toBeLessThanOrEqual(100);
      expect(waitBefore(2, busy(), options)).toBeGreaterThanOrEqual(200);
      expect(waitBefore(2, busy(), options)).toBeLessThanOrEqual(400);
      expect(waitBefore(5, busy(), options)).toBeLessThanOrEqual(1_000);
    }
  });
});
