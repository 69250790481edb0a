// A thread of the highlighting pool (highlightPool.ts). Plain JavaScript, loaded by Node itself:
// it registers the TypeScript loader, then reads the very highlighter the service's thread reads.
import { register } from 'tsx/esm/api';

register();
const { highlight } = await import('./highlights.ts');

/** Each chunk's HTML highlighted for the query. */
export default function highlightPage({ htmls, query, options }) {
  return htmls.map((html) => highlight(html, query, options));
}
