// Uploads can be answered before their body has been read (a refusal, a file over the limit). Such
// an answer closes the connection, the rest of the body is read and dropped for a moment, so the
// client can take in the answer, and then the connection goes.
import type { Request, Response } from 'express';
import { PassThrough, type Readable } from 'node:stream';

const DRAIN_MS = 1000;

export function closeAfterEarlyAnswer(req: Request, res: Response): void {
  // Keep-alive cannot outlive a body left half read: every upload answer closes the connection.
  res.shouldKeepAlive = false;
  res.on('finish', () => {
    if (req.complete) return;
    req.unpipe();
    req.resume();
    setTimeout(() => req.destroy(), DRAIN_MS).unref();
  });
}

/**
 * The request body as a stream of its own: a consumer that fails (a file over the limit) destroys
 * this stream, not the request, whose connection must still carry the answer. A client gone
 * mid-body fails it.
 */
export function detachedBody(req: Request): Readable {
  const body = new PassThrough();
  req.on('error', (error) => body.destroy(error));
  req.on('close', () => {
    if (!req.complete) body.destroy(new Error('the client closed the connection before the body ended'));
  });
  return req.pipe(body);
}
