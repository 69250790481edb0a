// The pieces of keyword ranking that need no engine: idf, a term as tsquery text, and how full-text
// reads a query (its ranking words, required phrases and negated words; a word being typed).
import { describe, expect, it } from 'vitest';
import { endsInPrefix, parseFulltext } from '../../server/search/retrieval/fulltext.js';
import { idf, lexemeQuery } from '../../server/search/retrieval/termWeights.js';

describe('idf', () => {
  it('falls as a term is in more documents, and stays above 0 for a term in all of them', () => {
    expect(idf(1000, 1)).toBeGreaterThan(idf(1000, 10));
    expect(idf(1000, 10)).toBeGreaterThan(idf(1000, 500));
    expect(idf(1000, 1000)).toBeGreaterThan(0);
    expect(idf(1000, 1)).toBeCloseTo(Math.log(1 + 999.5 / 1.5), 12);
    // Counts out of range (a count taken a moment apart from the total) are held to [0, N].
    expect(idf(10, 20)).toBe(idf(10, 10));
    expect(idf(10, -1)).toBe(idf(10, 0));
  });
});

describe('lexemeQuery', () => {
  it('quotes a lexeme as a one-term tsquery, marking a prefix', () => {
    expect(lexemeQuery({ lexeme: "it's", prefix: true })).toBe("'it''s':*");
    expect(lexemeQuery({ lexeme: 'a\\b', prefix: false })).toBe("'a\\\\b'");
    expect(lexemeQuery({ lexeme: 'plain', prefix: false })).toBe("'plain'");
  });
});

describe('parseFulltext', () => {
  it('ranks every word not negated, phrases included, and keeps phrases and -words as conditions', () => {
    expect(parseFulltext('"two year" warranty -television -"old model" two-factor')).toEqual({
      words: ['two', 'year', 'warranty', 'two-factor'],
      phrases: ['two year'],
      negated: ['television', 'old model'],
    });
    expect(parseFulltext('Refund  policy, refund')).toEqual({ words: ['Refund', 'policy,', 'refund'], phrases: [], negated: [] });
  });

  it('reads an unclosed quote as a phrase to the end, and ignores empty phrases and a lone minus', () => {
    expect(parseFulltext('"unclosed phrase')).toEqual({ words: ['unclosed', 'phrase'], phrases: ['unclosed phrase'], negated: [] });
    expect(parseFulltext('"" - a')).toEqual({ words: ['-', 'a'], phrases: [], negated: [] });
  });
});

describe('endsInPrefix', () => {
  it('holds for a last word being typed, not for a closed phrase or a -word', () => {
    expect(endsInPrefix('refund pol')).toBe(true);
    expect(endsInPrefix('"refund policy"')).toBe(false);
    expect(endsInPrefix('refund -pol')).toBe(false);
    expect(endsInPrefix('refund ')).toBe(true);
    expect(endsInPrefix('refund?')).toBe(false);
  });
});
