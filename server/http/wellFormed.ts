// Rules every value of a request must keep, whatever the operation, because the store cannot hold
// the value or the service cannot walk it: no NUL character (PostgreSQL text and jsonb refuse it),
// no lone UTF-16 surrogate (not Unicode: refused as UTF-8 by the database), no number JSON could
// not hold (`1e400` parses as Infinity), and no nesting deeper than MAX_DEPTH (deep values overflow
// the stack of whatever walks them). One step, before the contract's validation, refuses such a
// request with 400 naming the field; limits a schema can say (lengths, ranges) are in the contract.
import type { Request, RequestHandler } from 'express';
import contract from '../../generated/openapi.json' with { type: 'json' };
import { badRequest, type HttpError } from '../errors.js';

/** Objects and arrays inside one another, counting the body itself as the first level. */
export const MAX_DEPTH = 64;

type Parameter = { in: string; name: string; $ref?: string; schema?: { type?: string | string[] } };

interface MatchedOperation {
  schema: { parameters?: Parameter[]; requestBody?: { required?: boolean; content?: Record<string, unknown> } };
  pathParams?: Record<string, string>;
}

/** The step: a required body that is missing, then the body, the query and the path parameters. */
export function refuseIllFormedInput(): RequestHandler {
  return (req, _res, next) => {
    const openapi = (req as unknown as { openapi?: MatchedOperation }).openapi;
    if (!openapi) return next();
    try {
      requireBody(req, openapi.schema.requestBody);
      refuseNullForVariants(req, openapi.schema.requestBody);
      checkValue(req.body, [], 1);
      for (const [name, value] of Object.entries(req.query ?? {})) checkValue(value, [name], 1, 'in the query');
      for (const [name, value] of Object.entries(openapi.pathParams ?? {})) checkValue(value, [name], 1, 'in the path');
      const parameters = (openapi.schema.parameters ?? []).map(resolveParameter);
      for (const p of parameters) checkNumberText(p, p.in === 'path' ? openapi.pathParams?.[p.name] : p.in === 'query' ? req.query[p.name] : undefined);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * An operation whose contract requires a body gets 400 without one: without a Content-Type the
 * validator would answer 415, a status the contract does not declare, and with one but no bytes
 * the handler would get no body at all.
 */
function requireBody(req: Request, requestBody: MatchedOperation['schema']['requestBody']): void {
  if (!requestBody?.required) return;
  const types = Object.keys(requestBody.content ?? {}).join(' or ');
  const sent = req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? 0) > 0;
  if (!sent) throw badRequest(`the request body is required (${types})`);
  if (!req.get('content-type')) throw badRequest(`Content-Type: say what the body is (${types})`);
}

/**
 * A JSON `null` where the body is one of several objects told apart by a field (a discriminator,
 * as `type` of POST /api/analytics/search): express-openapi-validator reads that field of the body
 * before it validates it, and fails on null with a server error.
 */
function refuseNullForVariants(req: Request, requestBody: MatchedOperation['schema']['requestBody']): void {
  if (req.body !== null) return;
  const schema = (requestBody?.content?.['application/json'] as { schema?: { $ref?: string; discriminator?: unknown } } | undefined)?.schema;
  const named = schema?.$ref ? (contract.components.schemas as Record<string, { discriminator?: unknown }>)[schema.$ref.split('/').pop()!] : schema;
  if (named?.discriminator) throw badRequest('request/body must be object');
}

function resolveParameter(parameter: Parameter): Parameter {
  if (!parameter.$ref) return parameter;
  return (contract.components.parameters as Record<string, Parameter>)[parameter.$ref.split('/').pop()!];
}

/** A parameter the contract types as a number whose text reads as ±Infinity (`Infinity`, `1e400`). */
function checkNumberText(parameter: Parameter, text: unknown): void {
  const types = ([] as string[]).concat(parameter.schema?.type ?? []);
  if (!types.includes('integer') && !types.includes('number')) return;
  for (const one of ([] as unknown[]).concat(text ?? [])) {
    if (typeof one === 'string' && one.trim() !== '' && Math.abs(Number(one)) === Infinity) {
      throw badRequest(`${parameter.name} (in the ${parameter.in}): ${JSON.stringify(one)} is not a finite number`);
    }
  }
}

function checkValue(value: unknown, path: (string | number)[], depth: number, where?: string): void {
  if (typeof value === 'string') {
    checkText(value, path, where);
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw refusal(path, where, 'the number is out of range (JSON numbers must be finite doubles)');
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_DEPTH) throw refusal(outerField(path), where, `nested more than ${MAX_DEPTH} levels of objects and arrays deep`);
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) checkValue(item, [...path, i], depth + 1, where);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    checkText(key, path, where, `the key ${JSON.stringify(key)}`);
    checkValue(item, [...path, key], depth + 1, where);
  }
}

/** In a `u` regex a lone surrogate is a code point of its own (category Cs); a pair is one character. */
const LONE_SURROGATE = /\p{Cs}/u;

function checkText(text: string, path: (string | number)[], where: string | undefined, what = 'the text'): void {
  if (text.includes('\u0000')) throw refusal(path, where, `${what} contains a NUL character (U+0000), which cannot be stored`);
  if (LONE_SURROGATE.test(text))
    throw refusal(path, where, `${what} contains a lone UTF-16 surrogate (such as \\ud800 without its pair), which is not Unicode`);
}

function refusal(path: (string | number)[], where: string | undefined, problem: string): HttpError {
  const field = path.length ? fieldName(path) : 'the request body';
  return badRequest(`${field}${where ? ` (${where})` : ''}: ${problem}`);
}

/** The path up to its first named field (`metadata`, `[0].metadata`): a deep path is too long to show. */
function outerField(path: (string | number)[]): (string | number)[] {
  const named = path.findIndex((p) => typeof p === 'string');
  return named < 0 ? path.slice(0, 1) : path.slice(0, named + 1);
}

/** `metadata.a[2].b`, the way the contract's fields and the validator's messages are read. */
function fieldName(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}
