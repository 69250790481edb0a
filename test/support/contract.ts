// Checks every response a test receives against the bundled contract (generated/openapi.json):
// its status must be declared for the operation and its body must match the declared schema.
import { Ajv2020 as Ajv } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import contract from '../../generated/openapi.json' with { type: 'json' };

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** An Ajv holding `doc` as `contract.json`, whose schemas are then reached by JSON pointer. */
export function contractAjv(doc: object): Ajv {
  // `discriminator` stays an annotation: Ajv's keyword does not support `mapping`, and the variants of
  // every oneOf in the contract are exclusive by their `type` tags anyway.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(doc, 'contract.json');
  return ajv;
}

const ajv = contractAjv(contract);

type Json = Record<string, any>;
const doc = contract as Json;

const routes = Object.entries<Json>(doc.paths).map(([template, item]) => ({
  template,
  item,
  pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
  params: (template.match(/\{/g) ?? []).length,
}));

/** The operation a request hits, preferring literal segments over parameters, as the router does. */
function findOperation(method: string, path: string): { template: string; operation: Json } | null {
  const matches = routes.filter((r) => r.pattern.test(path) && r.item[method.toLowerCase()]);
  matches.sort((a, b) => a.params - b.params);
  const hit = matches[0];
  return hit ? { template: hit.template, operation: hit.item[method.toLowerCase()] } : null;
}

/** A JSON pointer as a URI fragment: `~` and `/` escaped, then URI-encoded (paths hold `{` and `}`). */
export function pointer(...parts: string[]): string {
  return parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
}

export class ContractViolation extends Error {}

/** Every violation seen, so a test fails even when a client library swallowed the thrown error. */
export const violations: string[] = [];

/** Throws a ContractViolation when the response departs from the contract. Unknown routes are not checked. */
export function checkResponse(method: string, url: string, status: number, body: unknown, contentType: string | null): void {
  try {
    checkAgainstContract(method, url, status, body, contentType);
  } catch (error) {
    if (error instanceof ContractViolation) violations.push(error.message);
    throw error;
  }
}

function checkAgainstContract(method: string, url: string, status: number, body: unknown, contentType: string | null): void {
  const path = new URL(url, 'http://x').pathname;
  const found = findOperation(method, path);
  if (!found) return;
  const where = `${method.toUpperCase()} ${found.template} -> ${status}`;
  let response = found.operation.responses[String(status)] ?? found.operation.responses.default;
  if (!response) throw new ContractViolation(`${where}: status ${status} is not declared (body: ${JSON.stringify(body)})`);
  let responsePointer = `#/paths/${pointer(found.template, method.toLowerCase(), 'responses', String(status))}`;
  if (response.$ref) {
    responsePointer = response.$ref;
    response = response.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((at: Json, part: string) => at[part], doc);
  }
  const declared = Object.keys(response.content ?? {});
  if (declared.length === 0) {
    if (body !== undefined && body !== '') throw new ContractViolation(`${where}: declared without a body, got ${JSON.stringify(body)}`);
    return;
  }
  // The media type the response says it has must be one the contract declares for it.
  const mediaType = declared.find((type) => contentType?.split(';')[0].trim() === type);
  if (!mediaType) throw new ContractViolation(`${where}: expected ${declared.join(' or ')}, got ${contentType}`);
  const validate = ajv.getSchema(`contract.json${responsePointer}/content/${pointer(mediaType)}/schema`);
  if (!validate) throw new ContractViolation(`${where}: no schema at ${responsePointer}`);
  if (!validate(body)) {
    throw new ContractViolation(`${where}: body departs from the contract: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
  }
}
