// The `query` field (`QueryTypes`): one text, or a list of texts with weights. Only text is searched
// (no image or audio model is configured). Weights must be finite and at least one positive: a
// negative weight pushes results away from its query, and a search needs something to move towards.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';

export interface WeightedText {
  text: string;
  weight: number;
}

export function weightedTexts(query: T.QueryTypes | T.SearchModalities, field = 'query'): WeightedText[] {
  if (!Array.isArray(query)) return [{ text: textOf(query, field), weight: 1 }];
  if (query.length === 0) throw badRequest(`${field}: give one query, or at least one {query, weight} pair`);
  const texts = query.map((item, i) => {
    const weight = item.weight;
    if (typeof weight !== 'number' || !Number.isFinite(weight))
      throw badRequest(`${field}[${i}].weight: must be a finite number, got ${JSON.stringify(weight)}`);
    return { text: textOf(item.query, `${field}[${i}].query`), weight };
  });
  if (!texts.some((t) => t.weight > 0)) throw badRequest(`${field}: at least one weight must be positive`);
  return texts;
}

function textOf(query: T.SearchModalities, field: string): string {
  if (typeof query !== 'string') throw badRequest(`${field}: only text queries are supported (no image or audio model is configured)`);
  if (query.trim() === '') throw badRequest(`${field}: must not be empty`);
  return query;
}
