// Highlighting: which words are marked, which passages are returned, and that the chunk's HTML is
// only ever changed by marks wrapped around text.
import { readFileSync } from 'node:fs';
import { parseDocument, DomUtils } from 'htmlparser2';
import { stem } from 'porter2';
import wordListPath from 'word-list';
import { describe, expect, it } from 'vitest';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { HIGHLIGHT_DEFAULTS, highlight, type Highlighted } from '../../server/search/highlights.js';

const PRE = '<mark><b>';
const POST = '</b></mark>';
const m = (s: string) => `${PRE}${s}${POST}`;

/** Checks what must hold of every result, then returns it. */
function h(html: string, query: string, options?: T.HighlightOptions | null): Highlighted {
  const result = highlight(html, query, options);
  const pre = options?.pre_tag ?? PRE;
  const post = options?.post_tag ?? POST;
  if (pre && post && result.chunk_html !== html) {
    // Removing the marks gives back the input byte for byte.
    expect(result.chunk_html.split(pre).join('').split(post).join('')).toBe(html);
    // Every mark wraps text only, and (for the default tags) is a real element, not attribute text.
    const opened = result.chunk_html.split(pre).length - 1;
    expect(result.chunk_html.split(post).length - 1).toBe(opened);
    const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(result.chunk_html.match(new RegExp(`${escapeRegExp(pre)}[^<]*${escapeRegExp(post)}`, 'g'))?.length).toBe(opened);
    if (pre === PRE) expect(DomUtils.getElementsByTagName('mark', parseDocument(result.chunk_html)).length).toBe(opened);
  }
  for (const passage of result.highlights) expect(passage).toBe(passage.trim());
  return result;
}

const unchanged = (html: string): Highlighted => ({ chunk_html: html, highlights: [] });

describe('defaults', () => {
  it('are those of the reference API', () => {
    expect(HIGHLIGHT_DEFAULTS).toEqual({
      highlight_results: true,
      highlight_strategy: 'exactmatch',
      highlight_delimiters: ['?', ',', '.', '!', '\n'],
      highlight_threshold: 0.8,
      highlight_window: 0,
      highlight_max_length: 8,
      highlight_max_num: 3,
      pre_tag: '<mark><b>',
      post_tag: '</b></mark>',
    });
  });

  it.each<[string, T.HighlightOptions | null | undefined]>([
    ['missing', undefined],
    ['null', null],
    ['empty', {}],
    [
      'all null',
      {
        highlight_results: null,
        highlight_strategy: null,
        highlight_delimiters: null,
        highlight_threshold: null,
        highlight_max_length: null,
        highlight_max_num: null,
        highlight_window: null,
        pre_tag: null,
        post_tag: null,
      },
    ],
  ])('apply when the options are %s', (_name, options) => {
    const html = 'Refund policy. Refunds take five days, refund now! Call us? No refund\nrefund later. Last refund';
    expect(h(html, 'refund', options)).toEqual({
      chunk_html: `${m('Refund')} policy. ${m('Refunds')} take five days, ${m('refund')} now! Call us? No ${m('refund')}\n${m('refund')} later. Last ${m('refund')}`,
      highlights: [`${m('Refund')} policy.`, `${m('Refunds')} take five days,`, `${m('refund')} now!`],
    });
  });
});

describe('highlight_results', () => {
  it('false returns the chunk unchanged and no highlights', () => {
    const html = '<p>Our refund policy</p>';
    expect(h(html, 'refund', { highlight_results: false })).toEqual(unchanged(html));
    expect(h(html, 'refund', { highlight_results: true }).highlights).toEqual([`Our ${m('refund')} policy`]);
  });
});

describe('nothing to mark', () => {
  it.each([
    ['an empty query', 'Our refund policy', ''],
    ['a blank query', 'Our refund policy', ' \n\t '],
    ['a query of punctuation', 'Our refund policy', '?!,.'],
    ['a query of emoji', 'Our refund policy 😀', '😀'],
    ['a query that only excludes', 'Our refund policy', '-refund -"refund policy"'],
    ['no match', 'Our refund policy', 'shipping'],
    ['a part of a word only', 'Our refund policy', 'fund'],
    ['an empty chunk', '', 'refund'],
    ['a chunk of tags only', '<p><br/></p>', 'refund'],
  ])('%s', (_name, html, query) => {
    expect(h(html, query)).toEqual(unchanged(html));
    expect(h(html, query, { highlight_strategy: 'v1' })).toEqual(unchanged(html));
  });
});

describe('highlight_strategy exactmatch', () => {
  it.each([
    ['is case-insensitive and keeps the chunk’s case', 'REFUND Refund refund', 'rEfUnD', `${m('REFUND')} ${m('Refund')} ${m('refund')}`],
    ['matches whole words, not parts of words', 'refund refunds prefund', 'refund', `${m('refund')} ${m('refunds')} prefund`],
    ['ignores punctuation in the query', 'ask for a refund today', '¿refund?!', `ask for a ${m('refund')} today`],
    ['ignores punctuation around words in the chunk', '(refund) "refund" refund’s', 'refund', `(${m('refund')}) "${m('refund')}" ${m('refund')}’s`],
    ['ignores stop words', 'what is the refund for', 'what is the refund', `what is the ${m('refund')} for`],
    ['uses stop words when the query has nothing else', 'to be or not', 'to be', `${m('to')} ${m('be')} or not`],
    ['marks each word on its own', 'our refund policy', 'refund policy', `our ${m('refund')} ${m('policy')}`],
    // Search matched them by their stem (Snowball English, as the index stems): so are they marked.
    ['matches the forms of a word that search matches', 'Glaciers refunded refunding', 'glacier refund', `${m('Glaciers')} ${m('refunded')} ${m('refunding')}`],
    ['folds accents and width', 'Café naïve ＲＥＦＵＮＤ', 'cafe naive refund', `${m('Café')} ${m('naïve')} ${m('ＲＥＦＵＮＤ')}`],
    ['matches numbers', 'Returns within 30 days', '30', `Returns within ${m('30')} days`],
    ['excludes -words', 'refund policy', 'refund -policy', `${m('refund')} policy`],
    ['matches joined terms as one', 'send an e-mail, or mail', 'e-mail', `send an ${m('e-mail')}, or mail`],
    ['matches numbers with a point', 'version 3.5 and 5', '3.5', `version ${m('3.5')} and 5`],
  ])('%s', (_name, html, query, expected) => {
    expect(h(html, query).chunk_html).toBe(expected ?? html);
  });

  it('ignores the threshold: one matched word is enough', () => {
    const html = 'Shipping is free. Refunds take five days.';
    expect(h(html, 'free refunds policy damaged', { highlight_threshold: 1 }).highlights).toEqual([
      `Shipping is ${m('free')}.`,
      `${m('Refunds')} take five days.`,
    ]);
  });
});

describe('quoted phrases', () => {
  it.each<[string, string, string, string | null, T.HighlightStrategy?]>([
    ['match as one span, stop words included', 'read the terms of service today', '"terms of service"', `read the ${m('terms of service')} today`],
    ['need the words in order and adjacent', 'service terms, terms and service', '"terms of service"', null],
    ['are case-insensitive', 'Terms Of Service', '"terms of service"', m('Terms Of Service')],
    ['take curly quotes', 'terms of service', '“terms of service”', m('terms of service')],
    ['combine with words', 'terms of service and a refund', '"terms of service" refund', `${m('terms of service')} and a ${m('refund')}`],
    ['are exact even under v1', 'terms of services', '"terms of service"', null, 'v1'],
    ['are marked whole under v1', 'the terms of service', '"terms of service"', `the ${m('terms of service')}`, 'v1'],
    ['can be excluded with a dash', 'terms of service refund', '-"terms of service" refund', `terms of service ${m('refund')}`],
    ['an unclosed quote is ignored', 'terms of service', '"terms of', `${m('terms')} of service`],
  ])('%s', (_name, html, query, expected, strategy) => {
    expect(h(html, query, { highlight_strategy: strategy ?? 'exactmatch' }).chunk_html).toBe(expected ?? html);
  });
});

describe('highlight_strategy v1', () => {
  const v1 = { highlight_strategy: 'v1' } as const;

  it.each([
    ['matches word forms sharing a stem', 'refunds refunded refunding', 'refund', `${m('refunds')} ${m('refunded')} ${m('refunding')}`],
    ['matches the chunk’s word forms of the query’s', 'a refund', 'refunding', `a ${m('refund')}`],
    ['marks an n-gram of the query as one span', 'our refund policy', 'refund policy', `our ${m('refund policy')}`],
    ['marks n-grams of word forms', 'damaged items are refunded', 'refund damaged item', `${m('damaged items')} are ${m('refunded')}`],
    ['keeps stop words inside an n-gram', 'the terms of service', 'terms of service', `the ${m('terms of service')}`],
    ['never ends a span on a stop word', 'the terms of use', 'terms of service', `the ${m('terms')} of use`],
    ['follows the query’s word order', 'policy refund', 'refund policy', `${m('policy')} ${m('refund')}`],
    [
      'prefers the longest n-gram',
      'return policy and refund policy details',
      'refund policy details',
      `return ${m('policy')} and ${m('refund policy details')}`,
    ],
    ['does not join words across an excluded one', 'refund policy', 'refund -x policy', `${m('refund')} ${m('policy')}`],
  ])('%s', (_name, html, query, expected) => {
    expect(h(html, query, v1).chunk_html).toBe(expected);
  });

  it('marks an n-gram as one span in the highlights too', () => {
    expect(h('<p>Our <a href="/refund">refund</a> policy is simple.</p>', 'refund policy', v1)).toEqual({
      chunk_html: `<p>Our <a href="/refund">${m('refund')}</a> ${m('policy')} is simple.</p>`,
      highlights: [`Our ${m('refund policy')} is simple.`],
    });
  });
});

describe('highlight_threshold', () => {
  const html = 'Refunding is slow. Our policy is fair. Refunds policy here.';
  it.each<[number | undefined, string[]]>([
    // Exact "policy" always qualifies; "Refunding" alone is 1 of 2 query words, "Refunds policy" 2 of 2.
    [undefined, [`${m('Refunds policy')} here.`, `Our ${m('policy')} is fair.`]],
    [0.8, [`${m('Refunds policy')} here.`, `Our ${m('policy')} is fair.`]],
    [0.5, [`${m('Refunds policy')} here.`, `${m('Refunding')} is slow.`, `Our ${m('policy')} is fair.`]],
    [0, [`${m('Refunds policy')} here.`, `${m('Refunding')} is slow.`, `Our ${m('policy')} is fair.`]],
  ])('v1 with threshold %s', (threshold, expected) => {
    const result = h(html, 'refund policy', { highlight_strategy: 'v1', highlight_threshold: threshold });
    expect(result.highlights).toEqual(expected);
    // Passages that do not qualify are not marked in the chunk either.
    expect(result.chunk_html.includes(m('Refunding'))).toBe(expected.some((p) => p.includes(m('Refunding'))));
  });

  it('a stem-only passage qualifies when it holds enough of the query', () => {
    expect(h('Refunding is slow.', 'refund', { highlight_strategy: 'v1', highlight_threshold: 1 }).highlights).toEqual([`${m('Refunding')} is slow.`]);
  });

  it('a passage without any match never qualifies, even at threshold 0', () => {
    expect(h('Nothing here. Refund there.', 'refund', { highlight_strategy: 'v1', highlight_threshold: 0 }).highlights).toEqual([`${m('Refund')} there.`]);
  });
});

describe('highlight_delimiters', () => {
  const html = 'First refund, second; refund? Third refund!\nFourth refund';
  it.each<[string, string[] | null | undefined, string[]]>([
    ['default', undefined, [`First ${m('refund')},`, `second; ${m('refund')}?`, `Third ${m('refund')}!`, `Fourth ${m('refund')}`]],
    ['custom', [';'], [`First ${m('refund')}, second;`, `${m('refund')}? Third ${m('refund')}! Fourth ${m('refund')}`]],
    ['none: the whole text', [], [`First ${m('refund')}, second; ${m('refund')}? Third ${m('refund')}! Fourth ${m('refund')}`]],
    ['multi-character', ['! '], [`First ${m('refund')}, second; ${m('refund')}? Third ${m('refund')}! Fourth ${m('refund')}`]],
    ['empty strings ignored', ['', '?'], [`First ${m('refund')}, second; ${m('refund')}?`, `Third ${m('refund')}! Fourth ${m('refund')}`]],
  ])('%s', (_name, delimiters, expected) => {
    expect(h(html, 'refund', { highlight_delimiters: delimiters, highlight_max_num: 5 }).highlights).toEqual(expected);
  });

  it('keeps runs of delimiters together and does not split inside numbers or addresses', () => {
    expect(h('Wait... a refund?! Costs 3.5 dollars at example.com, refund.', 'refund', { highlight_max_num: 5 }).highlights).toEqual([
      `a ${m('refund')}?!`,
      `${m('refund')}.`,
    ]);
  });

  it('treats block elements as line breaks and inline elements as part of the word', () => {
    const result = h('<p>Refund here</p><p>policy there</p>re<b>fund</b> policy', 'refund policy', { highlight_strategy: 'v1', highlight_max_num: 5 });
    expect(result.highlights).toEqual([m('refund policy'), `${m('Refund')} here`, `${m('policy')} there`]);
    expect(result.chunk_html).toBe(`<p>${m('Refund')} here</p><p>${m('policy')} there</p>${PRE}re${POST}<b>${m('fund')}</b> ${m('policy')}`);
  });

  it('splits at <br>', () => {
    expect(h('refund<br>policy', 'refund policy', { highlight_strategy: 'v1' }).highlights).toEqual([m('refund'), m('policy')]);
  });
});

describe('highlight_max_num', () => {
  const html = 'A refund. Refund policy for damaged items. Policy. Damaged goods, refund policy. Another refund.';
  const query = 'refund policy damaged';

  it('orders by matched query words, then by position', () => {
    expect(h(html, query, { highlight_max_num: 10 }).highlights).toEqual([
      `${m('Refund')} ${m('policy')} for ${m('damaged')} items.`,
      `${m('refund')} ${m('policy')}.`,
      `A ${m('refund')}.`,
      `${m('Policy')}.`,
      `${m('Damaged')} goods,`,
      `Another ${m('refund')}.`,
    ]);
  });

  it.each([
    [undefined, 3],
    [1, 1],
    [2, 2],
    [100, 6],
  ])('%s keeps at most that many', (max, count) => {
    const { highlights } = h(html, query, { highlight_max_num: max });
    expect(highlights).toHaveLength(count);
    expect(highlights[0]).toBe(`${m('Refund')} ${m('policy')} for ${m('damaged')} items.`);
  });

  it('0 returns no highlights but still marks the chunk', () => {
    const result = h(html, query, { highlight_max_num: 0 });
    expect(result.highlights).toEqual([]);
    expect(result.chunk_html).toContain(m('Refund'));
  });

  it('marks every qualifying passage in the chunk, not only the returned ones', () => {
    expect(h(html, query, { highlight_max_num: 1 }).chunk_html.split(PRE).length - 1).toBe(9);
  });
});

describe('highlight_window', () => {
  const html = 'one two three four five six seven refund eight nine ten eleven twelve';

  it.each<[number | undefined, string]>([
    [undefined, `one two three four five six seven ${m('refund')} eight nine ten eleven twelve`],
    [0, `one two three four five six seven ${m('refund')} eight nine ten eleven twelve`],
    [4, `six seven ${m('refund')} eight`],
    [5, `six seven ${m('refund')} eight nine`],
    [1, m('refund')],
    [12, `two three four five six seven ${m('refund')} eight nine ten eleven twelve`],
    [13, `one two three four five six seven ${m('refund')} eight nine ten eleven twelve`],
    [50, `one two three four five six seven ${m('refund')} eight nine ten eleven twelve`],
  ])('%s words', (window, expected) => {
    expect(h(html, 'refund', { highlight_window: window }).highlights).toEqual([expected]);
  });

  it('cuts around the first match and keeps the window full near the ends', () => {
    expect(h('refund a b c d e f refund', 'refund', { highlight_window: 4 }).highlights).toEqual([`${m('refund')} a b c`]);
    expect(h('a b c d e f g refund', 'refund', { highlight_window: 4 }).highlights).toEqual([`e f g ${m('refund')}`]);
  });

  it('cuts a span that crosses the window', () => {
    expect(h('a b c d refund policy now', 'refund policy', { highlight_strategy: 'v1', highlight_window: 2 }).highlights).toEqual([`d ${m('refund')}`]);
    expect(h('a b c d refund policy now', 'refund policy', { highlight_strategy: 'v1', highlight_window: 3 }).highlights).toEqual([`d ${m('refund policy')}`]);
  });

  it('does not change the chunk', () => {
    expect(h(html, 'refund', { highlight_window: 2 }).chunk_html).toBe(h(html, 'refund').chunk_html);
  });
});

describe('highlight_max_length', () => {
  const html = 'one two three four five';
  const query = 'one two three four five';

  it.each<[number | undefined, string]>([
    [undefined, m('one two three four five')],
    [8, m('one two three four five')],
    [5, m('one two three four five')],
    [2, `${m('one two')} ${m('three four')} ${m('five')}`],
    [1, `${m('one')} ${m('two')} ${m('three')} ${m('four')} ${m('five')}`],
    [0, `${m('one')} ${m('two')} ${m('three')} ${m('four')} ${m('five')}`],
  ])('v1 n-grams with %s', (maxLength, expected) => {
    expect(h(html, query, { highlight_strategy: 'v1', highlight_max_length: maxLength }).chunk_html).toBe(expected);
  });

  it('also bounds the spans of phrases', () => {
    expect(h(html, `"${query}"`, { highlight_max_length: 3 }).chunk_html).toBe(`${m('one two three')} ${m('four five')}`);
  });

  it('does not join words under exactmatch', () => {
    expect(h(html, query, { highlight_max_length: 8 }).chunk_html).toBe(`${m('one')} ${m('two')} ${m('three')} ${m('four')} ${m('five')}`);
  });
});

describe('pre_tag and post_tag', () => {
  it.each([
    ['<em class="hit">', '</em>'],
    ['[', ']'],
    ['', ''],
  ])('wrap with %j and %j', (pre, post) => {
    const html = '<p>Our <i>refund</i> policy.</p>';
    expect(h(html, 'refund', { pre_tag: pre, post_tag: post })).toEqual({
      chunk_html: `<p>Our <i>${pre}refund${post}</i> policy.</p>`,
      highlights: [`Our ${pre}refund${post} policy.`],
    });
  });
});

describe('HTML', () => {
  it.each([
    ['leaves attributes and tag names alone', '<a href="/refund" title="refund">refund</a>', 'refund', `<a href="/refund" title="refund">${m('refund')}</a>`],
    ['does not match a tag name', '<div class="div">a div</div>', 'div', `<div class="div">a ${m('div')}</div>`],
    ['marks an entity whole', 'caf&eacute; and caf&#233;', 'café', `${m('caf&eacute;')} and ${m('caf&#233;')}`],
    ['never matches inside an entity', 'Tom &amp; Jerry&nbsp;here', 'amp nbsp', null],
    ['matches words on either side of an entity', 'AT&amp;T and Tom&amp;Jerry', 'at&t jerry', `${m('AT&amp;T')} and Tom&amp;${m('Jerry')}`],
    [
      'leaves comments, scripts and styles alone',
      '<!-- refund --><script>var refund = 1</script><style>.refund{}</style>refund',
      'refund',
      `<!-- refund --><script>var refund = 1</script><style>.refund{}</style>${m('refund')}`,
    ],
    ['reads a title (text only) but never marks it', '<title>refund</title><p>refund</p>', 'refund', `<title>refund</title><p>${m('refund')}</p>`],
    ['splits a span at element boundaries', '<b>refund</b> <i>policy</i>', 'refund policy', `<b>${m('refund')}</b> <i>${m('policy')}</i>`],
    ['marks across entities inside one span', 'refund&nbsp;policy', 'refund policy', m('refund&nbsp;policy')],
    ['keeps unbalanced tags', '<b>unbalanced refund <i>policy', 'refund policy', `<b>unbalanced ${m('refund')} <i>${m('policy')}`],
    ['keeps a stray closing tag', 'refund</b></div> policy', 'refund', `${m('refund')}</b></div> policy`],
    ['gives up on text inside an unclosed tag', 'ok <a href="refund refund', 'refund', null],
    ['reads a lone < as text', 'a < b refund', 'refund', `a < b ${m('refund')}`],
  ])('%s', (_name, html, query, expected) => {
    expect(h(html, query, { highlight_strategy: 'v1' }).chunk_html).toBe(expected ?? html);
  });

  it('returns plain-text highlights: tags stripped, entities decoded, and HTML special characters escaped', () => {
    const html = '<p class="x">Tom &amp; Jerry&#39;s <b>caf&eacute;</b> says &lt;refund&gt;</p>';
    expect(h(html, 'cafe refund').highlights).toEqual([`Tom &amp; Jerry's ${m('café')} says &lt;${m('refund')}&gt;`]);
  });

  it('collapses whitespace in highlights', () => {
    expect(h('  our \t  refund   policy  ', 'refund').highlights).toEqual([`our ${m('refund')} policy`]);
  });
});

describe('other scripts and odd input', () => {
  it.each([
    ['Chinese by substring', '我们的退款政策很简单', '退款政策', `我们的${m('退款政策')}很简单`],
    ['Chinese with spaces between query words', '退款需要五天，政策很简单', '退款 政策', `${m('退款')}需要五天，${m('政策')}很简单`],
    ['Japanese', '返金ポリシーについて', 'ポリシー', `返金${m('ポリシー')}について`],
    ['Korean', '환불은 5일 걸립니다', '환불', `${m('환불')}은 5일 걸립니다`],
    ['mixed scripts', 'iPhone手机 refund', '手机 refund', `iPhone${m('手机')} ${m('refund')}`],
    ['emoji around words', '😀refund🎉 policy', 'refund', `😀${m('refund')}🎉 policy`],
    ['Cyrillic with case', 'Возврат средств', 'возврат', `${m('Возврат')} средств`],
  ])('%s', (_name, html, query, expected) => {
    expect(h(html, query).chunk_html).toBe(expected);
  });

  it.each([
    ['a non-string chunk', null, 'refund'],
    ['a non-string query', 'refund', null],
    ['odd option values', 'refund', 'refund'],
  ])('never throws on %s', (_name, html, query) => {
    const odd = { highlight_threshold: Number.NaN, highlight_window: -4, highlight_max_num: Infinity, highlight_delimiters: [null, 3] } as never;
    expect(() => highlight(html as unknown as string, query as unknown as string, odd)).not.toThrow();
  });

  it('handles odd options sensibly', () => {
    const odd = { highlight_threshold: Number.NaN, highlight_window: -4, highlight_max_num: -1, highlight_delimiters: [null, '.'] } as never;
    expect(highlight('a refund. b', 'refund', odd)).toEqual({ chunk_html: `a ${m('refund')}. b`, highlights: [] });
  });

  it('handles lone surrogates, control characters and long words', () => {
    const html = `\uD800 refund \u0000 ${'x'.repeat(5000)} refund`;
    expect(h(html, 'refund').chunk_html).toBe(`\uD800 ${m('refund')} \u0000 ${'x'.repeat(5000)} ${m('refund')}`);
  });

  it('is fast on a 10 KB chunk with a long query', () => {
    const words = 'refund policy damaged items shipping returns customer service order delivery'.split(' ');
    const html = Array.from({ length: 1200 }, (_, i) => `<span>${words[(i * 7) % words.length]}</span>${i % 9 ? ' ' : '. '}`).join('');
    const query = `${words.join(' ')} ${words.map((w) => `${w}s`).join(' ')} "customer service"`;
    const started = performance.now();
    for (let i = 0; i < 5; i++) h(html, query, { highlight_strategy: 'v1', highlight_max_num: 50 });
    expect((performance.now() - started) / 5).toBeLessThan(200);
  });
});

describe('words of plain ASCII text', () => {
  it('are the runs of letters and digits, as in any other text', () => {
    // Every ASCII character but markup and the passage delimiters, control characters included: none joins a word.
    const between = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).filter((c) => !/[A-Za-z0-9<&?,.!\n]/.test(c));
    for (const c of between) {
      const text = `x${c}Glacier9${c}y`;
      expect(h(text, 'glacier9').chunk_html, JSON.stringify(c)).toBe(`x${c}${m('Glacier9')}${c}y`);
    }
    // The same words found in text that is not ASCII alone.
    expect(h('x\u0015Glacier9 é', 'glacier9').chunk_html).toBe(`x\u0015${m('Glacier9')} é`);
    expect(h('Glaciers_melt', 'glacier').chunk_html).toBe(`${m('Glaciers')}_melt`);
  });
});

describe('passages passed over', () => {
  it('are only those without a word whose stem a query word shares', () => {
    // Snowball English turns "dying" into "die": a stem may end two letters away from its word.
    expect(h('They were dying. He died. Nothing else.', 'die').chunk_html).toBe(`They were ${m('dying')}. He ${m('died')}. Nothing else.`);
    expect(h('Relational tables. Nothing else.', 'relate').chunk_html).toBe(`${m('Relational')} tables. Nothing else.`);
  });

  it('rest on each English word keeping its stem but for at most the last two letters', () => {
    // The anchors of a query (its keys, its stems but for the last two letters) are looked for in
    // lower-cased ASCII text: every word whose stem is a query word's must contain its anchor.
    for (const word of readFileSync(wordListPath, 'utf8').split('\n').filter(Boolean)) {
      const stemmed = stem(word);
      expect(word.startsWith(stemmed.slice(0, Math.max(1, stemmed.length - 2))), `${word} → ${stemmed}`).toBe(true);
    }
  });
});

describe('a query word of combining marks alone', () => {
  it('marks nothing in ASCII text, and returns', () => {
    expect(h('Plain text. More text.', 'text \u0301')).toEqual({ chunk_html: `Plain ${m('text')}. More ${m('text')}.`, highlights: expect.any(Array) });
    expect(h('Plain words.', '\u0301\u0302')).toEqual(unchanged('Plain words.'));
  });
});
