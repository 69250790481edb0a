// Reading a fetched HTML page: its title, its links, and the part of it whose content is kept.
import { selectAll, selectOne } from 'css-select';
import render from 'dom-serializer';
import type { Element } from 'domhandler';
import { getAttributeValue, removeElement, textContent } from 'domutils';
import { parseDocument } from 'htmlparser2';
import { normaliseUrl } from './urls.js';

/** Never content: the head (the title is read apart), code, and what a browser does not show. */
const ALWAYS_DROPPED = 'head, title, script, style, noscript, template';

export interface TagSelection {
  /** Selector lists, checked once when the crawl starts. */
  include: string | null;
  exclude: string;
}

/** The crawl's includeTags and excludeTags as selector lists; throws on a selector that does not parse. */
export function tagSelection(includeTags: string[] = [], excludeTags: string[] = []): TagSelection {
  const selection = { include: includeTags.length ? includeTags.join(', ') : null, exclude: [ALWAYS_DROPPED, ...excludeTags].join(', ') };
  for (const [option, list] of [
    ['includeTags', selection.include],
    ['excludeTags', selection.exclude],
  ] as const) {
    try {
      if (list) selectOne(list, []);
    } catch {
      throw new TypeError(`${option}: ${list} is not a list of CSS selectors`);
    }
  }
  return selection;
}

export interface ReadPage {
  title: string | null;
  /** Every link on the page, normalised, in order (nav and footer too: they are how pages are found). */
  links: string[];
  /** The kept content. */
  html: string;
}

export function readHtmlPage(html: string, pageUrl: string, selection: TagSelection): ReadPage {
  const document = parseDocument(html);
  const title = textContent(selectOne('title', document) ?? []).trim() || null;
  const baseHref = selectOne<unknown, Element>('base[href]', document);
  const base = (baseHref && normaliseUrl(getAttributeValue(baseHref, 'href')!, pageUrl)) || pageUrl;
  const links = selectAll<unknown, Element>('a[href]', document).flatMap((a) => normaliseUrl(getAttributeValue(a, 'href')!, base) ?? []);
  for (const element of selectAll(selection.exclude, document)) removeElement(element);
  let kept: Element[] | typeof document = document;
  if (selection.include) {
    const chosen = new Set(selectAll<unknown, Element>(selection.include, document));
    // An element inside another chosen one is already in it.
    kept = [...chosen].filter((element) => !hasAncestorIn(element, chosen));
  }
  return { title, links, html: render(kept) };
}

function hasAncestorIn(element: Element, set: Set<Element>): boolean {
  for (let parent = element.parent; parent; parent = parent.parent) if (set.has(parent as Element)) return true;
  return false;
}
