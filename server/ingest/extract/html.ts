// HTML to text, streamed: the parser is fed the file segment by segment and the text it finds is
// handed on as it comes, laid out as a chunk's HTML is for indexing (text/html.ts).
import type { Readable } from 'node:stream';
import { htmlTextParser, PlainText } from '../../text/html.js';
import { decodeText } from './stream.js';

export async function* htmlText(stream: Readable): AsyncGenerator<string> {
  const text = new PlainText();
  const parser = htmlTextParser(text);
  for await (const segment of decodeText(stream)) {
    parser.write(segment);
    const laidOut = text.take();
    if (laidOut) yield laidOut;
  }
  parser.end();
  const rest = text.take();
  if (rest) yield rest;
}
