// A page's chunks: the project's heading split (the one split_html_content uses, so a crawled page
// is cut as that operation cuts it), each section given back as HTML with its heading.
import render from 'dom-serializer';
import { Element, Text } from 'domhandler';
import { splitHtml } from '../../domain/chunks/split.js';
import { nameBasedUuid } from '../../ingest/ids.js';
import type { PageChunk } from './types.js';

export interface RemoveStrings {
  headingRemoveStrings?: string[];
  bodyRemoveStrings?: string[];
}

export function htmlChunks(pageUrl: string, html: string, remove: RemoveStrings): PageChunk[] {
  const sections = splitHtml(html, remove.headingRemoveStrings, remove.bodyRemoveStrings);
  return sections.map(({ headings, body }, position) => {
    const heading = headings.at(-1);
    const nodes = body.split('\n').map((line) => element('p', line));
    // The heading's level is its depth in the path: what the split keeps of the page's outline.
    if (heading) nodes.unshift(element(`h${Math.min(headings.length, 6)}`, heading));
    return { trackingId: chunkTrackingId(pageUrl, position), html: render(nodes), headings };
  });
}

/** A text page read as one paragraph per line, then split as HTML is (it has no headings). */
export function textChunks(pageUrl: string, text: string, remove: RemoveStrings): PageChunk[] {
  const paragraphs = text.split(/\r?\n/).map((line) => element('p', line));
  return htmlChunks(pageUrl, render(paragraphs), remove);
}

/** The same page and position always give the same id, so a re-crawl updates chunks in place. */
export const chunkTrackingId = (pageUrl: string, position: number) => nameBasedUuid(`website-chunk:${pageUrl}:${position}`);

const element = (name: string, text: string) => new Element(name, {}, [new Text(text)]);
