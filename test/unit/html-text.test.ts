// HTML → text: the one walk over HTML, its plain-text layout, and that the four readers built on it
// (indexing, highlighting, file extraction, heading splits) read the same words.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { innerText } from '../../server/domain/chunks/content.js';
import { splitHtml } from '../../server/domain/chunks/split.js';
import { htmlText } from '../../server/ingest/extract/html.js';
import { extractText, highlight } from '../../server/search/highlights.js';
import { htmlTextParser, htmlToText, PlainText } from '../../server/text/html.js';

type Event = ['text', string, string] | ['block', string, boolean];

/** What the walk reports, each run of text with the source it points at. */
function walk(html: string): Event[] {
  const events: Event[] = [];
  htmlTextParser({
    text: (text, start, end) => events.push(['text', text, html.slice(start, end)]),
    block: (name, opening) => events.push(['block', name, opening]),
  }).end(html);
  return events;
}

// Inline and block elements, entities, hidden elements, <br>, a list, a table, a title and comments.
const TRICKY = [
  '<!DOCTYPE html><html><head><title>Field &amp; guide</title><meta charset="utf-8"><style>p{color:red}</style><script>var owl = 1</script></head><body>',
  '<h1>Night <em>birds</em></h1>',
  '<p>Owls hunt&nbsp;&amp; sleep;\n  caf&eacute; re<b>fund</b>s, AT&amp;T</p>',
  '<ul><li>Barn owl</li><li>Snowy<br>owl</li></ul>',
  '<table><tr><th>Name</th><td>Tawny</td></tr><tr><td>Little</td><td>Eagle</td></tr></table>',
  '<div>one<span>two</span></div><div>three</div>',
  '<noscript>enable</noscript><template><p>later</p></template><select><option>Pick</option></select>',
  '<textarea>typed</textarea><svg><text>label</text></svg><iframe>frame</iframe><video>unsupported</video>',
  '<!-- hidden comment --><pre>  keep\n  this  </pre><P>tail <a href="/x">link</a> <img alt="pic" src="p.png">end</P>',
  '</body></html>',
].join('');

const TRICKY_TEXT = [
  'Field & guide',
  'Night birds',
  'Owls hunt & sleep; café refunds, AT&T',
  'Barn owl',
  'Snowy',
  'owl',
  'Name',
  'Tawny',
  'Little',
  'Eagle',
  'onetwo',
  'three',
  'keep this',
  'tail link end',
].join('\n');

const HIDDEN_WORDS = ['var', 'color', 'enable', 'later', 'Pick', 'typed', 'label', 'frame', 'unsupported', 'comment', 'pic'];

/** The words and what separates them, whatever the whitespace. */
const words = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('htmlTextParser', () => {
  it('reports runs of decoded text with their source, and block boundaries', () => {
    expect(walk('<p>Tom &amp; <b>Jerry</b></p>x<br>y')).toEqual([
      ['block', 'p', true],
      ['text', 'Tom ', 'Tom '],
      ['text', '&', '&amp;'],
      ['text', ' ', ' '],
      ['text', 'Jerry', 'Jerry'],
      ['block', 'p', false],
      ['text', 'x', 'x'],
      ['block', 'br', true],
      ['block', 'br', false],
      ['text', 'y', 'y'],
    ]);
  });

  it('reads tag names in any case', () => {
    expect(walk('<DIV>a</Div><SCRIPT>b</SCRIPT>')).toEqual([
      ['block', 'div', true],
      ['text', 'a', 'a'],
      ['block', 'div', false],
    ]);
  });

  it.each([
    'script',
    'style',
    'noscript',
    'template',
    'textarea',
    'iframe',
    'noembed',
    'noframes',
    'xmp',
    'select',
    'datalist',
    'svg',
    'canvas',
    'audio',
    'video',
  ])('hides <%s>, blocks inside it included', (name) => {
    expect(walk(`a<${name}><p>hidden</p></${name}>b`)).toEqual([
      ['text', 'a', 'a'],
      ['text', 'b', 'b'],
    ]);
  });

  it('hides everything after <plaintext>', () => {
    expect(walk('a<plaintext>b</plaintext>c')).toEqual([['text', 'a', 'a']]);
  });

  it("keeps the title, a line of its own, and nothing else of the head's", () => {
    expect(htmlToText('<head><title>Owls</title><style>x</style><script>y</script><noscript>z</noscript></head><p>Body</p>')).toBe('Owls\nBody');
  });

  it('reads HTML written in segments as it reads it whole', () => {
    const whole = htmlToText(TRICKY);
    for (let cut = 0; cut <= TRICKY.length; cut++) {
      const text = new PlainText();
      const parser = htmlTextParser(text);
      parser.write(TRICKY.slice(0, cut));
      const first = text.take();
      parser.end(TRICKY.slice(cut));
      expect(first + text.take(), `cut at ${cut}`).toBe(whole);
    }
  });
});

describe('htmlToText', () => {
  it.each([
    ['collapses whitespace and trims', '  <p>  a \t b\n c </p>  ', 'a b c'],
    ['runs inline elements together', 're<b>fund</b> <i>policy</i>', 'refund policy'],
    ['puts blocks on lines of their own, with no blank lines', '<div><p>a</p><p>b</p></div><br><br>c', 'a\nb\nc'],
    ['breaks lines at <br>', 'a<br>b<br/>c', 'a\nb\nc'],
    ['lists items and cells on lines', '<ol><li>a</li><li>b</li></ol><table><tr><td>c</td><td>d</td></tr></table>', 'a\nb\nc\nd'],
    ['decodes entities', '&lt;p&gt; caf&eacute; &#233; &amp;', '<p> café é &'],
    ['collapses a non-breaking space too', 'a&nbsp;&nbsp;b', 'a b'],
    ['reads the text of links, not their targets or images', '<a href="/x">go</a> <img src="y.png" alt="pic">', 'go'],
    ['reads an empty document as no text', '<p> </p><script>x</script>', ''],
    ['reads the whole tricky sample', TRICKY, TRICKY_TEXT],
  ])('%s', (_name, html, expected) => {
    expect(htmlToText(html)).toBe(expected);
  });
});

describe('the four readers', () => {
  it('index what the highlighter reads', () => {
    expect(innerText(TRICKY)).toBe(TRICKY_TEXT);
    expect(words(extractText(TRICKY).text)).toBe(words(TRICKY_TEXT));
  });

  it('highlight every word indexed and no hidden one', () => {
    for (const word of new Set(innerText(TRICKY).match(/[\p{L}\p{N}]+/gu))) {
      expect(highlight(TRICKY, word).highlights.length, word).toBeGreaterThan(0);
    }
    for (const word of HIDDEN_WORDS) {
      expect(innerText(TRICKY)).not.toContain(word);
      expect(highlight(TRICKY, word), word).toEqual({ chunk_html: TRICKY, highlights: [] });
    }
  });

  it('extract from a file the text indexed for a chunk', async () => {
    const bytes = Buffer.from(TRICKY);
    const segments = [bytes.subarray(0, 101), bytes.subarray(101, 333), bytes.subarray(333)];
    const extracted: string[] = [];
    for await (const text of htmlText(Readable.from(segments))) extracted.push(text);
    expect(extracted.length).toBeGreaterThan(1);
    expect(extracted.join('')).toBe(TRICKY_TEXT);
  });

  it('split at headings the text indexed', () => {
    expect(splitHtml(TRICKY)).toEqual([
      { headings: [], body: 'Field & guide' },
      { headings: ['Night birds'], body: TRICKY_TEXT.split('\n').slice(2).join('\n') },
    ]);
    expect(splitHtml('<h2>Snowy<br>owl</h2><p>White</p>')).toEqual([{ headings: ['Snowy owl'], body: 'White' }]);
  });
});
