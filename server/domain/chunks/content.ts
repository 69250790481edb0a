// What a chunk's vector and index entry are made of: the inner text of its HTML (or the HTML itself,
// or the explicit semantic / full-text content), with the full-text boost applied.
import { htmlToText } from '../../text/html.js';

export interface ContentFields {
  chunk_html: string | null;
  convert_html_to_text: boolean;
  semantic_content: string | null;
  fulltext_content: string | null;
  fulltext_boost: { phrase: string; boost_factor: number } | null;
}

/** The text a reader sees in the HTML, as the highlighter reads it; plain text passes through untouched. */
export function innerText(html: string): string {
  return /<[a-z!/]|&[#a-z0-9]+;/i.test(html) ? htmlToText(html) : html.trim();
}

function bodyText(content: ContentFields): string {
  const html = content.chunk_html ?? '';
  return content.convert_html_to_text ? innerText(html) : html;
}

/** The text embedded for semantic search. */
export function semanticText(content: ContentFields): string {
  return content.semantic_content ?? bodyText(content);
}

/**
 * The text indexed for full-text search. A full-text boost multiplies the weight of each phrase
 * token in the chunk: the engines weigh a token by how often it occurs, so each occurrence is
 * repeated (factor - 1) more times. A factor at or below 1 leaves the text as it is.
 */
export function lexicalText(content: ContentFields): string {
  const text = content.fulltext_content ?? bodyText(content);
  const boost = content.fulltext_boost;
  if (!boost || boost.boost_factor <= 1) return text;
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const extra: string[] = [];
  for (const token of new Set(boost.phrase.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])) {
    const occurrences = words.filter((w) => w === token).length;
    const repeats = Math.round(occurrences * (boost.boost_factor - 1));
    for (let i = 0; i < repeats; i++) extra.push(token);
  }
  return extra.length ? `${text}\n${extra.join(' ')}` : text;
}

/** Pieces of about `size` characters at sentence ends, for averaging the vectors of a long text. */
export function splitForAveraging(text: string, size = 800): string[] {
  const sentences = text.match(/[^.!?\n]+[.!?]*\s*/g) ?? [text];
  const pieces: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    if (current && current.length + sentence.length > size) {
      pieces.push(current.trim());
      current = '';
    }
    current += sentence;
  }
  if (current.trim()) pieces.push(current.trim());
  return pieces.length ? pieces : [text];
}
