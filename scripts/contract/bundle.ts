// Bundles the contract split by tag (openapi/*.yaml) into one OpenAPI document.
// Every file is a fragment of the same document and refers to components as `#/components/...`,
// so bundling is a merge that refuses any name defined twice. The examples (openapi/examples/) are
// then put in their places (./examples.ts).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { applyExamples, readExamples } from './examples.js';

type Doc = Record<string, any>;
const ROOT_FILE = 'openapi.yaml';

export async function bundleContract(dir: string): Promise<Doc> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  if (!files.includes(ROOT_FILE)) throw new Error(`${dir}/${ROOT_FILE} is missing`);
  const doc: Doc = parse(await readFile(path.join(dir, ROOT_FILE), 'utf8'));
  doc.paths ??= {};
  doc.components ??= {};
  for (const file of files.filter((f) => f !== ROOT_FILE)) {
    const fragment: Doc = parse(await readFile(path.join(dir, file), 'utf8')) ?? {};
    for (const key of Object.keys(fragment)) {
      if (key !== 'paths' && key !== 'components') throw new Error(`${file}: only paths and components may appear, found ${key}`);
    }
    mergeInto(doc.paths, fragment.paths ?? {}, `${file}: paths`);
    for (const [section, entries] of Object.entries<Doc>(fragment.components ?? {})) {
      doc.components[section] ??= {};
      mergeInto(doc.components[section], entries, `${file}: components.${section}`);
    }
  }
  for (const section of Object.keys(doc.components)) doc.components[section] = sortKeys(doc.components[section]);
  doc.paths = sortKeys(doc.paths);
  applyExamples(doc, await readExamples(path.join(dir, 'examples')));
  assertRefsResolve(doc);
  return doc;
}

function mergeInto(target: Doc, source: Doc, where: string): void {
  for (const [name, value] of Object.entries(source)) {
    if (name in target) throw new Error(`${where}: ${name} is defined twice`);
    target[name] = value;
  }
}

function sortKeys(o: Doc): Doc {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

function assertRefsResolve(doc: Doc): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        const target = v
          .replace(/^#\//, '')
          .split('/')
          .reduce<any>((at, part) => at?.[part], doc);
        if (target === undefined) throw new Error(`unresolved reference ${v}`);
      } else visit(v);
    }
  };
  visit(doc);
}
