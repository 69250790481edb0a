// A fetch that sends a request again when the service (or a proxy before it) answers 429 or 503,
// waiting longer each time: as long as its Retry-After says, else an exponential back-off with
// jitter. Only requests that may be repeated are: those of an idempotent method, and those the
// caller marks as only reading.

export interface RetryOptions {
  /** How many times a request is sent again at most; 0 turns retries off. Default 3. */
  retries: number;
  /** The first wait, in milliseconds, doubled for each retry after it. Default 500. */
  minDelayMs: number;
  /** The longest wait, in milliseconds, whatever Retry-After asks. Default 10,000. */
  maxDelayMs: number;
  /** The statuses that mean "try again later". Default 429 and 503. */
  statuses: readonly number[];
}

export const defaultRetryOptions: RetryOptions = { retries: 3, minDelayMs: 500, maxDelayMs: 10_000, statuses: [429, 503] };

/** The methods that RFC 9110 defines as idempotent. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * `send`, retrying requests on the statuses of `options`: every request when `everyMethod`,
 * otherwise only those of an idempotent method.
 */
export function retryingFetch(send: typeof fetch, options: RetryOptions, everyMethod = false): typeof fetch {
  if (options.retries <= 0) return send;
  return async (input, init) => {
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (!everyMethod && !IDEMPOTENT_METHODS.has(method)) return send(input, init);
    const request = new Request(input, init);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= options.retries;
      const response = await send(last ? request : request.clone());
      if (last || !options.statuses.includes(response.status)) return response;
      await response.body?.cancel();
      await sleep(waitBefore(attempt, response, options), request.signal);
    }
  };
}

/** Milliseconds to wait before retry number `attempt` (from 0) after `response`. */
export function waitBefore(attempt: number, response: Response, options: RetryOptions): number {
  const asked = retryAfterMs(response.headers.get('retry-after'));
  const backOff = options.minDelayMs * 2 ** attempt;
  const wait = asked ?? backOff / 2 + Math.random() * (backOff / 2);
  return Math.min(wait, options.maxDelayMs);
}

/** A Retry-After header's wait in milliseconds: delay-seconds or an HTTP date. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', abort, { once: true });
    function done() {
      signal.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal.reason);
    }
  });
}
