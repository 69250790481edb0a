// A tsvector as PostgreSQL prints it ('lexeme':1,5B 'other' …), read back into lexemes and term
// frequencies. Reading the text is several times cheaper for the database than unnesting each
// value into arrays, which matters when an in-memory index reads every chunk of a dataset.
//
// The output form (tsvectorout): each lexeme in single quotes, with ' and \ doubled inside; then,
// unless the value was stripped of positions, a colon and its positions, comma-separated, each
// possibly followed by a weight letter. A lexeme's frequency is its number of positions, or 1.

/** The lexemes of a printed tsvector and, in the same order, their frequencies. */
export function parseTsvectorText(text: string): { terms: string[]; tfs: number[] } {
  const terms: string[] = [];
  const tfs: number[] = [];
  let at = 0;
  while (at < text.length) {
    if (text[at] === ' ') {
      at++;
      continue;
    }
    if (text[at] !== "'") throw new Error(`not a printed tsvector at ${at}: ${text.slice(at, at + 20)}`);
    let lexeme = '';
    let from = ++at;
    for (;;) {
      const quote = text.indexOf("'", at);
      const slash = text.indexOf('\\', at);
      if (quote < 0) throw new Error('not a printed tsvector: a lexeme is not closed');
      if (slash >= 0 && slash < quote) {
        lexeme += text.slice(from, slash + 1);
        at = from = slash + 2;
      } else if (text[quote + 1] === "'") {
        lexeme += text.slice(from, quote + 1);
        at = from = quote + 2;
      } else {
        lexeme += text.slice(from, quote);
        at = quote + 1;
        break;
      }
    }
    let tf = 1;
    if (text[at] === ':') {
      const end = text.indexOf(' ', at);
      const positions = end < 0 ? text.slice(at + 1) : text.slice(at + 1, end);
      tf = positions.split(',').length;
      at = end < 0 ? text.length : end;
    }
    terms.push(lexeme);
    tfs.push(tf);
  }
  return { terms, tfs };
}
