// The contract's examples, kept apart from the operations they illustrate (openapi/examples/), and
// put in their places when the contract is bundled.
//
// - `<tag>.yaml` files hold, by operationId, the examples of an operation: `parameters` (its own
//   parameters, by name: a value each), `requestBody` (by media type) and `responses` (by status, then
//   media type). A media type's entry is written as in OpenAPI: one `example`, or named `examples`
//   (each with `summary` and `value`).
// - `parameters.yaml` holds the examples of the shared parameters (components.parameters), by name.
//
// An example of something the contract does not declare (an unknown operationId, parameter, media
// type or status), or given twice, fails the bundle. Whether each example is valid for its schema is
// checked by test/unit/contract-examples.test.ts.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

type Doc = Record<string, any>;
const SHARED_PARAMETERS_FILE = 'parameters.yaml';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export interface ExampleFile {
  file: string;
  content: Doc;
}

/** The example files of `dir` (none when it does not exist), in name order. */
export async function readExamples(dir: string): Promise<ExampleFile[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return Promise.all(names.map(async (file) => ({ file, content: parse(await readFile(path.join(dir, file), 'utf8')) ?? {} })));
}

/** Puts every example in its place in `doc`, copying each node it changes (YAML aliases share nodes). */
export function applyExamples(doc: Doc, files: ExampleFile[]): void {
  const operations = new Map<string, Doc>();
  for (const item of Object.values<Doc>(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]?.operationId) operations.set(item[method].operationId, item[method]);
  }
  for (const { file, content } of files) {
    if (file === SHARED_PARAMETERS_FILE) {
      for (const [name, value] of Object.entries(content)) applySharedParameter(doc, name, value, file);
      continue;
    }
    for (const [operationId, examples] of Object.entries<Doc>(content)) {
      const operation = operations.get(operationId);
      if (!operation) throw new Error(`${file}: ${operationId} is not an operation of the contract`);
      applyToOperation(operation, examples, `${file}: ${operationId}`);
    }
  }
}

function applySharedParameter(doc: Doc, name: string, value: unknown, where: string): void {
  const parameters = doc.components?.parameters ?? {};
  if (!(name in parameters)) throw new Error(`${where}: ${name} is not a parameter of components.parameters`);
  parameters[name] = withExample(parameters[name], value, `${where}: ${name}`);
}

function applyToOperation(operation: Doc, examples: Doc, where: string): void {
  for (const key of Object.keys(examples)) {
    if (!['parameters', 'requestBody', 'responses'].includes(key)) throw new Error(`${where}: ${key} is not parameters, requestBody or responses`);
  }
  for (const [name, value] of Object.entries(examples.parameters ?? {})) {
    const parameters: Doc[] = [...(operation.parameters ?? [])];
    const index = parameters.findIndex((p) => p.name === name);
    if (index < 0) {
      const shared = parameters.some((p) => p.$ref?.endsWith(`/${name}`));
      throw new Error(`${where}: ${name} is not a parameter of its own${shared ? ` (a shared one's example goes in ${SHARED_PARAMETERS_FILE})` : ''}`);
    }
    parameters[index] = withExample(parameters[index], value, `${where}: parameter ${name}`);
    operation.parameters = parameters;
  }
  if (examples.requestBody) {
    if (!operation.requestBody?.content) throw new Error(`${where}: takes no request body`);
    operation.requestBody = {
      ...operation.requestBody,
      content: withMediaExamples(operation.requestBody.content, examples.requestBody, `${where}: requestBody`),
    };
  }
  for (const [status, byMedia] of Object.entries<Doc>(examples.responses ?? {})) {
    const response = operation.responses?.[status];
    if (!response) throw new Error(`${where}: declares no ${status} response`);
    if (!response.content) throw new Error(`${where}: its ${status} response has no body${response.$ref ? ` here (${response.$ref} is shared)` : ''}`);
    operation.responses = { ...operation.responses, [status]: { ...response, content: withMediaExamples(response.content, byMedia, `${where}: ${status}`) } };
  }
}

function withMediaExamples(content: Doc, byMedia: Doc, where: string): Doc {
  const result = { ...content };
  for (const [media, entry] of Object.entries<Doc>(byMedia)) {
    if (!(media in content)) throw new Error(`${where}: ${media} is not one of its media types (${Object.keys(content).join(', ')})`);
    const keys = Object.keys(entry ?? {});
    if (keys.length !== 1 || !['example', 'examples'].includes(keys[0])) throw new Error(`${where}: ${media} must hold example or examples, alone`);
    if (content[media].example !== undefined || content[media].examples !== undefined)
      throw new Error(`${where}: ${media} has examples in the contract already`);
    if (keys[0] === 'examples') {
      for (const [name, example] of Object.entries<Doc>(entry.examples)) {
        if (!example || typeof example !== 'object' || !('value' in example)) throw new Error(`${where}: ${media} example ${name} has no value`);
      }
    }
    result[media] = { ...content[media], ...entry };
  }
  return result;
}

function withExample(parameter: Doc, value: unknown, where: string): Doc {
  if (parameter.$ref) throw new Error(`${where}: is a reference; give the example of ${parameter.$ref} instead`);
  if (parameter.example !== undefined || parameter.examples !== undefined) throw new Error(`${where}: has an example in the contract already`);
  return { ...parameter, example: value };
}
