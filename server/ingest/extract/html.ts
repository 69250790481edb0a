// HTML to text, streamed: the parser is fed the file segment by segment and the text it finds is
// handed on as it comes. Block elements end a line (so sentences and list items split as
// expected); scripts, styles and the like are skipped; entities are decoded by the parser.
import { Parser } from 'htmlparser2';
import type { Readable } from 'node:stream';
import { decodeText } from './stream.js';

const BLOCK = new Set([
  'p',
  'div',
  'br',
  'li',
  'tr',
  'td',
  'th',
  'section',
  'article',
  'header',
  'footer',
  'aside',
  'nav',
  'main',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'pre',
  'blockquote',
  'table',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'hr',
  'title',
  'figcaption',
  'address',
]);
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);
/** Inside <head>, only the title is text. */
const KEEP_IN_SKIPPED = new Set(['title']);

export async function* htmlText(stream: Readable): AsyncGenerator<string> {
  let out: string[] = [];
  let skipping = 0;
  let kept = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (KEEP_IN_SKIPPED.has(name)) kept++;
        else if (SKIP.has(name)) skipping++;
        if (BLOCK.has(name)) out.push('\n');
      },
      ontext(text) {
        if (skipping === 0 || kept > 0) out.push(text.replace(/\s+/g, ' '));
      },
      onclosetag(name) {
        if (KEEP_IN_SKIPPED.has(name)) kept = Math.max(0, kept - 1);
        else if (SKIP.has(name)) skipping = Math.max(0, skipping - 1);
        if (BLOCK.has(name)) out.push('\n');
      },
    },
    { decodeEntities: true },
  );
  const take = () => {
    const text = out.join('');
    out = [];
    return text;
  };
  for await (const segment of decodeText(stream)) {
    parser.write(segment);
    const text = take();
    if (text) yield text;
  }
  parser.end();
  const rest = take();
  if (rest) yield rest;
}
