// Chunk HTML made harmless before the page shows it: whatever a chunk holds (scripts, handlers,
// styles, frames), only plain structure and text survive, and links only to http(s) pages.
import DOMPurify from 'dompurify';

/** What a matching passage keeps: its text and the marks around the words that matched. */
const PASSAGE = { ALLOWED_TAGS: ['mark', 'b', 'strong', 'i', 'em', 'code', 'sub', 'sup'], ALLOWED_ATTR: [] };

/** What a whole chunk keeps: headings, paragraphs, lists, tables, emphasis, marks and links. */
const CHUNK = {
  ALLOWED_TAGS: [
    ...PASSAGE.ALLOWED_TAGS,
    ...['p', 'br', 'hr', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'blockquote', 'pre', 'span', 'div', 'a'],
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'caption'],
  ],
  ALLOWED_ATTR: ['href'],
  ALLOWED_URI_REGEXP: /^https?:/i,
};

/** A highlighted passage as nodes to append. */
export function passageNodes(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, { ...PASSAGE, RETURN_DOM_FRAGMENT: true });
}

/** A chunk's HTML as nodes to append; its links open in a new tab and tell the target nothing. */
export function chunkNodes(html: string): DocumentFragment {
  const fragment = DOMPurify.sanitize(html, { ...CHUNK, RETURN_DOM_FRAGMENT: true });
  fragment.querySelectorAll('a').forEach((link) => {
    link.target = '_blank';
    link.rel = 'noopener noreferrer nofollow';
  });
  return fragment;
}

/** The visible text of a chunk's HTML. */
export function plainText(html: string): string {
  return DOMPurify.sanitize(html, { ALLOWED_TAGS: [], RETURN_DOM_FRAGMENT: true }).textContent ?? '';
}
