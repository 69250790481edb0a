// What a call that the service refuses throws, and the one step that turns a generated function's
// `{ data, error, response }` into its data or that error.

/** A reply of the service outside 2xx: its status and the `message` it gave. */
export class ChunkSearchError extends Error {
  override readonly name = 'ChunkSearchError';
  /** The HTTP status, e.g. 400, 401, 404, 426. */
  readonly status: number;
  /** The reply's body: the service's `{ message }`, or its text when it was not JSON. */
  readonly body: unknown;
  /** The reply itself (its body already read), for its headers. */
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    super(messageOf(body) ?? `${response.status} ${response.statusText}`.trim());
    this.status = response.status;
    this.body = body;
    this.response = response;
  }
}

function messageOf(body: unknown): string | undefined {
  if (typeof body === 'string' && body) return body;
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return undefined;
}

/** The headers of a reply as a plain object, as the reference client hands them to its callers. */
export type HeadersCallback = (headers: Record<string, string>) => void;

/** What a generated function resolves to: its data or error, and the reply. */
export interface CallResult<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

/**
 * The data of a generated function's result, or a {@link ChunkSearchError} when the service
 * refused the call. A request that never got a reply (no network, aborted) rejects with the error
 * fetch gave. A 204 reply is `undefined`.
 *
 * ```ts
 * const me = await unwrap(getMe({ client: chunkSearch.client }));
 * ```
 */
export async function unwrap<T>(pending: Promise<CallResult<T>>, parseHeaders?: HeadersCallback): Promise<T> {
  const { data, error, response } = await pending;
  if (!response) throw error;
  if (parseHeaders) parseHeaders(headersObject(response.headers));
  if (!response.ok) throw new ChunkSearchError(response, error);
  return (response.status === 204 ? undefined : data) as T;
}

function headersObject(headers: Headers): Record<string, string> {
  const object: Record<string, string> = {};
  headers.forEach((value, name) => {
    object[name] = value;
  });
  return object;
}

/**
 * The reply of a generated function's result whose body is left to read (`parseAs: 'stream'`), or
 * a {@link ChunkSearchError} when the service refused the call.
 */
export async function unwrapResponse(pending: Promise<CallResult<unknown>>, parseHeaders?: HeadersCallback): Promise<Response> {
  const { error, response } = await pending;
  if (!response) throw error;
  if (parseHeaders) parseHeaders(headersObject(response.headers));
  if (!response.ok) throw new ChunkSearchError(response, error);
  return response;
}
