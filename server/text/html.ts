// HTML → text: the one reading of HTML that indexing, highlighting, file extraction and heading
// splits share, so a word indexed is a word the highlighter can find, and words are run together
// or kept apart the same way everywhere.
import { Parser } from 'htmlparser2';

/** What a walk over HTML reports, in document order. */
export interface HtmlTextSink {
  /**
   * A run of visible text, entities decoded. [start, end) is where the parser read it in the HTML
   * (for a character reference, the whole reference); the caller checks it before relying on it.
   */
  text(text: string, start: number, end: number): void;
  /** A block element opens or closes (a void one like <br> does both): text on either side is not one word. */
  block?(name: string, opening: boolean): void;
}

// Elements whose content a reader does not see as text: code, styles, fallbacks for what the page
// embeds or plays, form controls' values and choices, drawings. <head> needs no rule: its text is
// its title, kept, or in one of these; browsers move any other text out of it.
const HIDDEN = new Set('audio canvas datalist iframe noembed noframes noscript plaintext script select style svg template textarea video xmp'.split(' '));
// Elements laid out as blocks (or lines, for <br>, cells and options): the union of what the four
// readers used, and the few other blocks of HTML, so no reader runs together words another keeps
// apart. The title is a line of its own: for a file it names the page; a chunk's HTML rarely has one.
const BLOCKS = new Set(
  (
    'address article aside blockquote br caption dd details dialog div dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 ' +
    'header hgroup hr legend li main menu nav ol option p pre section summary table tbody td tfoot th thead title tr ul'
  ).split(' '),
);

/** A parser that reports the HTML written to it, whole or in segments, to `sink`. */
export function htmlTextParser(sink: HtmlTextSink): Pick<Parser, 'write' | 'end'> {
  // Depth inside hidden elements; htmlparser2 closes every element it opens, so it returns to 0.
  let hidden = 0;
  const parser: Parser = new Parser(
    {
      onopentagname(name) {
        if (HIDDEN.has(name)) hidden++;
        else if (hidden === 0 && BLOCKS.has(name)) sink.block?.(name, true);
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) hidden--;
        else if (hidden === 0 && BLOCKS.has(name)) sink.block?.(name, false);
      },
      ontext(text) {
        if (hidden === 0) sink.text(text, parser.startIndex, parser.endIndex + 1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  return parser;
}

/**
 * A sink that lays the walk out as plain text: runs of whitespace become one space, each block
 * boundary a line break, with no blank lines and nothing at either end. `take()` hands on what is
 * laid out so far, so a stream can pass text on as it comes and still get the same text.
 */
export class PlainText implements HtmlTextSink {
  private out = '';
  /** Whitespace owed before the next word: none, a space or a line break. */
  private gap = '';
  private started = false;

  text(text: string): void {
    const words = text.split(/\s+/);
    for (let i = 0; i < words.length; i++) {
      if (i > 0) this.owe(' ');
      if (!words[i]) continue;
      this.out += this.gap + words[i];
      this.gap = '';
      this.started = true;
    }
  }

  block(): void {
    this.owe('\n');
  }

  take(): string {
    const text = this.out;
    this.out = '';
    return text;
  }

  private owe(gap: string): void {
    if (this.started && this.gap !== '\n') this.gap = gap;
  }
}

/** The text a reader sees in the HTML, laid out as plain text. */
export function htmlToText(html: string): string {
  const text = new PlainText();
  htmlTextParser(text).end(html);
  return text.take();
}
