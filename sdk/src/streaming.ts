// RAG answers as they are written: `POST /api/message` (and its edit and regenerate variants) and
// `POST /api/chunk/generate` stream `text/plain` unless asked not to, and name the RAG query they
// recorded in the `SVC-QueryID` header.

/**
 * An answer read as it arrives, piece by piece of text:
 *
 * ```ts
 * const answer = await chunkSearch.createMessageStream({ topic_id, new_message_content: 'Where?' });
 * for await (const text of answer) process.stdout.write(text);
 * console.log(answer.queryId);
 * ```
 *
 * It can be iterated once. Leaving the loop early (`break`, an exception) cancels the answer.
 */
export class TextStream implements AsyncIterable<string> {
  /** The RAG query the service recorded with this answer (its `SVC-QueryID` header). */
  readonly queryId: string | null;
  /** The reply, whose body this stream reads. */
  readonly response: Response;

  constructor(response: Response) {
    this.response = response;
    this.queryId = response.headers.get('SVC-QueryID');
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    // An answer asked for whole (`stream_response: false`) is one JSON string.
    if (this.response.headers.get('content-type')?.includes('json')) {
      yield (await this.response.json()) as string;
      return;
    }
    if (!this.response.body) return;
    const reader = this.response.body.getReader();
    const decoder = new TextDecoder();
    let ended = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        if (text) yield text;
      }
      ended = true;
      const rest = decoder.decode();
      if (rest) yield rest;
    } finally {
      if (!ended) await reader.cancel();
      reader.releaseLock();
    }
  }

  /** The whole answer, once it has ended. */
  async text(): Promise<string> {
    let text = '';
    for await (const piece of this) text += piece;
    return text;
  }
}

/** The reader of an answer's body, as the reference client's `…Reader` methods give it. */
export function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  const reader = response.body?.getReader();
  if (!reader) throw new Error('the answer has no body to read');
  return reader;
}

/** The reader of an answer's body with the RAG query recorded with it, as the reference client's `…ReaderWithQueryId` methods give them. */
export function readerWithQueryId(response: Response): { reader: ReadableStreamDefaultReader<Uint8Array>; queryId: string | null } {
  return { reader: readerOf(response), queryId: response.headers.get('SVC-QueryID') };
}
