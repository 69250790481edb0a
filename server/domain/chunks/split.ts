// Splits an HTML document at its headings: each piece of body text carries the headings above it.
import { Parser } from 'htmlparser2';
import type * as T from '../../../generated/client/types.gen.js';

const HEADING = /^h([1-6])$/;
const BLOCK = new Set(['p', 'div', 'li', 'br', 'tr', 'section', 'article', 'pre', 'blockquote', 'table', 'ul', 'ol']);
const SKIP = new Set(['script', 'style', 'noscript', 'template']);

export function splitHtml(html: string, removeFromHeadings: string[] = [], removeFromBodies: string[] = []): T.ChunkedContent[] {
  const pieces: T.ChunkedContent[] = [];
  const headings: { level: number; text: string }[] = [];
  let body = '';
  let heading: { level: number; text: string } | null = null;
  let skipping = 0;

  const flush = () => {
    const text = clean(body, removeFromBodies);
    if (text) pieces.push({ headings: headings.map((h) => h.text), body: text });
    body = '';
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIP.has(name)) skipping++;
        const level = HEADING.exec(name)?.[1];
        if (level) {
          flush();
          heading = { level: Number(level), text: '' };
        } else if (BLOCK.has(name)) body += '\n';
      },
      ontext(text) {
        if (skipping) return;
        if (heading) heading.text += text;
        else body += text;
      },
      onclosetag(name) {
        if (SKIP.has(name)) skipping--;
        if (heading && HEADING.test(name)) {
          const done: { level: number; text: string } = heading;
          heading = null;
          while (headings.length && headings[headings.length - 1].level >= done.level) headings.pop();
          const text = clean(done.text, removeFromHeadings);
          if (text) headings.push({ level: done.level, text });
        } else if (BLOCK.has(name)) body += '\n';
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  flush();
  return pieces;
}

function clean(text: string, remove: string[]): string {
  let out = text;
  for (const fragment of remove) if (fragment) out = out.split(fragment).join('');
  return out
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}
