// How much a query term counts in keyword ranking: its inverse document frequency (a word few
// chunks hold says more about a chunk than one most chunks hold), and a term as tsquery text.

/** BM25's inverse document frequency: ln(1 + (N − df + 0.5) / (df + 0.5)), always above 0. */
export function idf(documents: number, frequency: number): number {
  const df = Math.min(Math.max(frequency, 0), documents);
  return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
}

/** A term of a tsquery: a lexeme, matched as a prefix (`'refun':*`) or as a whole. */
export interface QueryTerm {
  lexeme: string;
  prefix: boolean;
}

/** A term as the text of a one-term tsquery (quotes doubled, backslashes escaped, `:*` for a prefix). */
export function lexemeQuery({ lexeme, prefix }: QueryTerm): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'${prefix ? ':*' : ''}`;
}
