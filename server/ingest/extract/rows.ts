// Record files, streamed one record at a time: CSV (header row names the fields; values typed as
// the reference types them), JSONL (one JSON value a line) and JSON (the items of a top-level
// array, or the document itself). A malformed record stops the file with its line number.
import { JSONParser } from '@streamparser/json';
import { parse as parseCsv } from 'csv-parse';
import type { Readable } from 'node:stream';
import { decodeText, readAll } from './stream.js';
import { UnreadableFileError, type Row } from './types.js';

/** A CSV cell as a JSON value: `null`/`None` are null, numbers and true/false are typed, the rest stays text. */
export function csvValue(raw: string): unknown {
  const value = raw.trim();
  if (value === 'null' || value === 'None') return null;
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value)) {
    const number = Number(value);
    if (Number.isFinite(number)) return number;
  }
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  return value;
}

export async function* csvRows(stream: Readable): AsyncGenerator<Row> {
  const parser = stream.pipe(
    parseCsv({
      bom: true,
      // The header row names the fields, trimmed; a row with fewer cells leaves the rest null.
      columns: (header: string[]) => header.map((name) => name.trim()),
      relax_column_count: true,
      skip_empty_lines: true,
      cast: (value, context) => (context.header ? value : csvValue(value)),
    }),
  );
  stream.on('error', (error) => parser.destroy(error));
  try {
    for await (const record of parser) yield record as Row;
  } catch (error) {
    throw new UnreadableFileError(`the CSV file could not be parsed: ${(error as Error).message}`);
  }
}

export async function* jsonlRows(stream: Readable): AsyncGenerator<Row> {
  let line = 1;
  let rest = '';
  const parseLine = (text: string): Row | undefined => {
    const trimmed = text.trim();
    if (!trimmed) return undefined;
    try {
      return JSON.parse(trimmed);
    } catch (error) {
      throw new UnreadableFileError(`line ${line} of the JSONL file is not JSON: ${(error as Error).message}`);
    }
  };
  for await (const segment of decodeText(stream)) {
    rest += segment;
    let start = 0;
    for (let newline = rest.indexOf('\n'); newline >= 0; newline = rest.indexOf('\n', start)) {
      const row = parseLine(rest.slice(start, newline));
      if (row !== undefined) yield row;
      start = newline + 1;
      line++;
    }
    rest = rest.slice(start);
  }
  const last = parseLine(rest);
  if (last !== undefined) yield last;
}

/** A JSON file: each item of a top-level array (streamed), or the whole document as one record. */
export async function* jsonRows(open: () => Readable): AsyncGenerator<Row> {
  if ((await firstCharacter(open())) !== '[') {
    const text = (await readAll(open(), 'JSON documents that are not arrays')).toString('utf8');
    try {
      yield JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (error) {
      throw new UnreadableFileError(`the JSON file could not be parsed: ${(error as Error).message}`);
    }
    return;
  }
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  let ready: Row[] = [];
  parser.onValue = ({ value }) => {
    ready.push(value);
  };
  try {
    for await (const segment of decodeText(open())) {
      parser.write(segment);
      const batch = ready;
      ready = [];
      yield* batch;
    }
    if (!parser.isEnded) parser.end();
  } catch (error) {
    throw new UnreadableFileError(`the JSON file could not be parsed: ${(error as Error).message}`);
  }
  yield* ready;
}

async function firstCharacter(stream: Readable): Promise<string | null> {
  try {
    for await (const segment of decodeText(stream)) {
      const found = segment.replace(/^\uFEFF/, '').match(/\S/);
      if (found) return found[0];
    }
    return null;
  } finally {
    stream.destroy();
  }
}
