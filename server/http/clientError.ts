// Requests Node refuses before express sees them (headers over the size limit, malformed HTTP, a
// request that took too long to arrive). Node's own answer has no body; this one carries the same
// `{message}` as every other error. Wire it with `server.on('clientError', answerClientError)`.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

interface ClientError extends Error {
  code?: string;
}

/** The status and words for each parser failure Node reports; anything else is a malformed request. */
function describe(error: ClientError): { status: number; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'the request headers are over the size limit (16 KB in all)' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request did not arrive in time' };
    default:
      return { status: 400, message: `the request is not valid HTTP (${error.code ?? error.message})` };
  }
}

export function answerClientError(error: ClientError, socket: Duplex): void {
  // A connection the client reset, or one whose answer has begun, cannot take an answer.
  const answering = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  const { status, message } = describe(error);
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
