// What a public page is made of: the dataset's page options (PUBLIC_DATASET.extra_params) read into
// values of the right kind, defaults filled in, and URLs kept only when they are http(s). The page's
// script gets these settings as JSON; the server's HTML uses only the title and link preview.

/** The settings the page's script starts from (client/page.ts reads them from the page). */
export interface PageSettings {
  datasetId: string;
  /** The page's read-only key. */
  apiKey: string;
  brandName: string;
  heading: string;
  brandColor: string | null;
  brandLogoImgSrcUrl: string | null;
  brandFontFamily: string | null;
  placeholder: string;
  theme: 'light' | 'dark';
  debounceMs: number;
  /** Request fields every search sends (the page's `searchOptions` without `use_autocomplete`). */
  searchOptions: Record<string, unknown>;
  useAutocomplete: boolean;
  /** The tags offered as filters; null: the dataset's most used ones. */
  tags: { tag: string; label: string; selected: boolean }[] | null;
  chat: boolean;
  showResultHighlights: boolean;
  openLinksInNewTab: boolean;
  defaultSearchQueries: string[];
  defaultSearchQuery: string | null;
  problemLink: string | null;
  creatorName: string | null;
  creatorLinkedInUrl: string | null;
}

/** The link preview of the page. */
export interface PagePreview {
  title: string;
  description: string | null;
  image: string | null;
}

type Options = Record<string, unknown>;

export function pageSettings(dataset: { id: string; name: string }, extraParams: unknown, apiKey: string): PageSettings {
  const o: Options = isObject(extraParams) ? extraParams : {};
  const brandName = text(o.brandName) ?? dataset.name;
  const { use_autocomplete, ...searchOptions } = isObject(o.searchOptions) ? o.searchOptions : {};
  return {
    datasetId: dataset.id,
    apiKey,
    brandName,
    heading: [text(o.headingPrefix), brandName, text(o.forBrandName) && `for ${text(o.forBrandName)}`].filter(Boolean).join(' '),
    brandColor: text(o.brandColor),
    brandLogoImgSrcUrl: webUrl(o.brandLogoImgSrcUrl),
    brandFontFamily: text(o.brandFontFamily),
    placeholder: text(o.placeholder) ?? 'Search...',
    theme: o.theme === 'dark' ? 'dark' : 'light',
    debounceMs: Number.isInteger(o.debounceMs) && (o.debounceMs as number) >= 0 ? Math.min(o.debounceMs as number, 5000) : 200,
    searchOptions,
    useAutocomplete: use_autocomplete !== false,
    tags: Array.isArray(o.tags) ? o.tags.filter(isObject).flatMap(pageTag) : null,
    chat: o.chat !== false,
    showResultHighlights: o.showResultHighlights !== false,
    openLinksInNewTab: o.openLinksInNewTab === true,
    defaultSearchQueries: Array.isArray(o.defaultSearchQueries)
      ? o.defaultSearchQueries.map((q) => (isObject(q) ? text(q.query) : text(q))).filter((q): q is string => q !== null)
      : [],
    defaultSearchQuery: text(o.defaultSearchQuery),
    problemLink: webUrl(o.problemLink, ['http:', 'https:', 'mailto:']),
    creatorName: text(o.creatorName),
    creatorLinkedInUrl: webUrl(o.creatorLinkedInUrl),
  };
}

export function pagePreview(settings: PageSettings, extraParams: unknown): PagePreview {
  const o: Options = isObject(extraParams) ? extraParams : {};
  const og: Options = isObject(o.openGraphMetadata) ? o.openGraphMetadata : {};
  return { title: text(og.title) ?? settings.heading, description: text(og.description), image: webUrl(og.image) };
}

function pageTag(t: Options): PageSettings['tags'] & object {
  const tag = text(t.tag);
  return tag === null ? [] : [{ tag, label: text(t.label) ?? tag, selected: t.selected === true }];
}

function isObject(value: unknown): value is Options {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

function webUrl(value: unknown, protocols = ['http:', 'https:']): string | null {
  const given = text(value);
  if (!given) return null;
  try {
    return protocols.includes(new URL(given).protocol) ? given : null;
  } catch {
    return null;
  }
}
