// The contract's examples (openapi/examples/): every operation has them, each is valid for the schema
// it illustrates, and bundling refuses an example of something the contract does not declare.
import { describe, expect, it } from 'vitest';
import { bundleContract } from '../../scripts/contract/bundle.js';
import { applyExamples } from '../../scripts/contract/examples.js';
import { projectPath } from '../../scripts/contract/paths.js';
import { contractAjv, pointer } from '../support/contract.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const doc = await bundleContract(projectPath('openapi'));
const ajv = contractAjv(doc);

const operations = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => ({ id: item[method].operationId as string, path, method, operation: item[method] as Json })),
);

/** Each example of a media type: its one `example`, or each of its named `examples`. */
function examplesOf(media: Json): { name: string; value: unknown }[] {
  if (media.example !== undefined) return [{ name: 'example', value: media.example }];
  return Object.entries<Json>(media.examples ?? {}).map(([name, example]) => ({ name, value: example.value }));
}

interface Example {
  where: string;
  schema: string;
  value: unknown;
}

/** Every example the bundled contract holds, with the pointer of the schema it must be valid for. */
function allExamples(): Example[] {
  const found: Example[] = [];
  for (const [name, parameter] of Object.entries<Json>(doc.components.parameters ?? {})) {
    if (parameter.example !== undefined)
      found.push({ where: `parameter ${name}`, schema: `#/components/parameters/${pointer(name)}/schema`, value: parameter.example });
  }
  for (const { id, path, method, operation } of operations) {
    const at = `#/paths/${pointer(path, method)}`;
    (operation.parameters ?? []).forEach((parameter: Json, index: number) => {
      if (parameter.example !== undefined)
        found.push({ where: `${id} parameter ${parameter.name}`, schema: `${at}/parameters/${index}/schema`, value: parameter.example });
    });
    for (const [type, media] of Object.entries<Json>(operation.requestBody?.content ?? {})) {
      for (const { name, value } of examplesOf(media))
        found.push({ where: `${id} request ${type} ${name}`, schema: `${at}/requestBody/content/${pointer(type)}/schema`, value });
    }
    for (const [status, response] of Object.entries<Json>(operation.responses)) {
      for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
        for (const { name, value } of examplesOf(media))
          found.push({ where: `${id} ${status} ${type} ${name}`, schema: `${at}/responses/${status}/content/${pointer(type)}/schema`, value });
      }
    }
  }
  return found;
}

describe('every operation has examples', () => {
  it.each(operations)('$id: its request body and its success response', ({ operation }) => {
    const missing: string[] = [];
    for (const [type, media] of Object.entries<Json>(operation.requestBody?.content ?? {})) {
      if (examplesOf(media).length === 0) missing.push(`request ${type}`);
    }
    for (const [status, response] of Object.entries<Json>(operation.responses)) {
      if (!/^2\d\d$/.test(status)) continue;
      for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
        if (examplesOf(media).length === 0) missing.push(`${status} ${type}`);
      }
    }
    expect(missing, 'examples missing (openapi/examples/)').toEqual([]);
  });
});

describe('every example is valid for its schema', () => {
  const examples = allExamples();

  it('finds the examples of requests, responses and parameters', () => {
    for (const kind of [/ request /, / 200 /, /^\w+ parameter /, /^parameter /])
      expect(
        examples.some((e) => kind.test(e.where)),
        String(kind),
      ).toBe(true);
  });

  it.each(examples)('$where', ({ schema, value }) => {
    const validate = ajv.getSchema(`contract.json${schema}`);
    expect(validate, `no schema at ${schema}`).toBeDefined();
    const valid = validate!(value);
    expect(valid, ajv.errorsText(validate!.errors)).toBe(true);
  });
});

describe('bundling refuses an example of something the contract does not declare', () => {
  const contract = () => ({
    paths: {
      '/api/chunk/{chunk_id}': {
        get: {
          operationId: 'get_chunk',
          parameters: [{ name: 'chunk_id', in: 'path', schema: { type: 'string' } }, { $ref: '#/components/parameters/DatasetHeader' }],
          responses: { '200': { content: { 'application/json': { schema: { type: 'object' } } } }, '204': { description: 'none' } },
        },
        post: {
          operationId: 'put_chunk',
          requestBody: { content: { 'application/json': { schema: { type: 'object' }, example: { already: true } } } },
          responses: { '204': { description: 'done' } },
        },
      },
    },
    components: { parameters: { DatasetHeader: { name: 'SVC-Dataset', in: 'header', schema: { type: 'string' } } } },
  });
  const apply = (file: string, content: Json) => () => applyExamples(contract(), [{ file, content }]);

  it('puts examples in their places', () => {
    const doc = contract();
    applyExamples(doc, [
      {
        file: 'chunk.yaml',
        content: { get_chunk: { parameters: { chunk_id: 'c1' }, responses: { '200': { 'application/json': { example: { id: 'c1' } } } } } },
      },
      { file: 'parameters.yaml', content: { DatasetHeader: 'd1' } },
    ]);
    const get = doc.paths['/api/chunk/{chunk_id}'].get as Json;
    expect(get.parameters[0].example).toBe('c1');
    expect(get.responses['200'].content['application/json'].example).toEqual({ id: 'c1' });
    expect((doc.components.parameters.DatasetHeader as Json).example).toBe('d1');
  });

  it.each([
    ['an unknown operation', apply('chunk.yaml', { get_chunks: { responses: {} } }), /get_chunks is not an operation of the contract/],
    ['an unknown key', apply('chunk.yaml', { get_chunk: { response: {} } }), /response is not parameters, requestBody or responses/],
    ['an unknown parameter', apply('chunk.yaml', { get_chunk: { parameters: { id: 'x' } } }), /id is not a parameter of its own/],
    [
      'a body the operation does not take',
      apply('chunk.yaml', { get_chunk: { requestBody: { 'application/json': { example: {} } } } }),
      /takes no request body/,
    ],
    ['an undeclared status', apply('chunk.yaml', { get_chunk: { responses: { '201': { 'application/json': { example: {} } } } } }), /declares no 201/],
    ['a response without a body', apply('chunk.yaml', { get_chunk: { responses: { '204': { 'application/json': { example: {} } } } } }), /has no body/],
    ['an undeclared media type', apply('chunk.yaml', { get_chunk: { responses: { '200': { 'text/plain': { example: 'x' } } } } }), /text\/plain is not one of/],
    [
      'a named example without a value',
      apply('chunk.yaml', { get_chunk: { responses: { '200': { 'application/json': { examples: { a: { summary: 'a' } } } } } } }),
      /example a has no value/,
    ],
    [
      'anything but example or examples',
      apply('chunk.yaml', { get_chunk: { responses: { '200': { 'application/json': { schema: {} } } } } }),
      /must hold example or examples/,
    ],
    [
      'an example the contract has already',
      apply('chunk.yaml', { put_chunk: { requestBody: { 'application/json': { example: {} } } } }),
      /has examples in the contract already/,
    ],
    ['an unknown shared parameter', apply('parameters.yaml', { OrganizationHeader: 'o1' }), /OrganizationHeader is not a parameter of components.parameters/],
  ])('%s', (_, run, message) => {
    expect(run).toThrow(message);
  });

  it('leaves the nodes YAML aliases share untouched', () => {
    const doc = contract();
    const shared = { 'application/json': { schema: { type: 'object' } } };
    const paths = doc.paths['/api/chunk/{chunk_id}'] as Json;
    paths.get.responses['200'].content = shared;
    paths.post.responses['200'] = { content: shared };
    applyExamples(doc, [{ file: 'chunk.yaml', content: { get_chunk: { responses: { '200': { 'application/json': { example: { id: 'c1' } } } } } } }]);
    expect(shared['application/json']).not.toHaveProperty('example');
    expect(paths.post.responses['200'].content['application/json']).not.toHaveProperty('example');
  });
});
