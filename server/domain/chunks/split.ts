// Splits an HTML document at its headings: each piece of body text carries the headings above it.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { htmlTextParser, PlainText } from '../../text/html.js';

const HEADING = /^h([1-6])$/;

export function splitHtml(html: string, removeFromHeadings: string[] = [], removeFromBodies: string[] = []): T.ChunkedContent[] {
  const pieces: T.ChunkedContent[] = [];
  const headings: { level: number; text: string }[] = [];
  const body = new PlainText();
  let heading: { level: number; text: PlainText } | null = null;

  const flush = () => {
    const text = clean(body.take(), removeFromBodies);
    if (text) pieces.push({ headings: headings.map((h) => h.text), body: text });
  };
  htmlTextParser({
    text(text) {
      (heading?.text ?? body).text(text);
    },
    block(name, opening) {
      const level = HEADING.exec(name)?.[1];
      if (level && opening) {
        flush();
        heading = { level: Number(level), text: new PlainText() };
      } else if (level && heading) {
        const done: { level: number; text: PlainText } = heading;
        heading = null;
        while (headings.length && headings[headings.length - 1].level >= done.level) headings.pop();
        const text = clean(done.text.take(), removeFromHeadings);
        if (text) headings.push({ level: done.level, text });
      } else if (heading) {
        heading.text.text(' '); // a heading is one line: a block inside it only parts words
      } else body.block();
    },
  }).end(html);
  flush();
  return pieces;
}

/** The text without the fragments to remove, laid out again: a removal can leave spaces or empty lines. */
function clean(text: string, remove: string[]): string {
  let out = text;
  for (const fragment of remove) if (fragment) out = out.split(fragment).join('');
  return out
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}
