// An OpenAPI document read into the operations a crawl turns into chunks: OpenAPI 3.x and
// Swagger 2.0, JSON or YAML. Local `$ref`s (`#/...`) are followed where the text needs them
// (parameters, request bodies, responses); a schema is named, never expanded.
import { parse as parseYaml } from 'yaml';

export interface OperationParameter {
  name: string;
  in: string;
  required: boolean;
  /** `string`, `integer (int64)`, `string[]`, a schema's name; null when the document gives none. */
  type: string | null;
  description: string | null;
}

export interface OperationContent {
  /** A media type for a request body; a status code for a response. */
  key: string;
  /** For responses only: the response's description. */
  description: string | null;
  /** Media types with the schema each carries (its name, or its type), null when none. */
  media: { type: string; schema: string | null }[];
}

export interface Operation {
  method: string;
  path: string;
  operationId: string | null;
  summary: string | null;
  description: string | null;
  tags: string[];
  deprecated: boolean;
  parameters: OperationParameter[];
  requestBody: { required: boolean; description: string | null; media: { type: string; schema: string | null }[] } | null;
  responses: OperationContent[];
}

export interface ApiDocument {
  /** `OpenAPI 3.1.0`, `Swagger 2.0`. */
  version: string;
  title: string | null;
  /** The tags the document declares, in its order (operations may use others). */
  declaredTags: string[];
  operations: Operation[];
}

/** The document cannot be read: the message says why. */
export class DocumentError extends Error {}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null);

/** Parses the text (JSON, else YAML) and reads it as an OpenAPI document; throws DocumentError. */
export function readDocument(source: string): ApiDocument {
  return fromValue(parseText(source));
}

function parseText(source: string): unknown {
  const trimmed = source.replace(/^\uFEFF/, '').trim();
  if (!trimmed) throw new DocumentError('the document is empty');
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      // Not JSON after all: YAML's flow style also starts with a brace.
    }
  }
  try {
    // Aliases are capped (the library's default), so a small document cannot expand into a huge one.
    return parseYaml(trimmed, { uniqueKeys: false, merge: true, maxAliasCount: 100 });
  } catch (error) {
    const first = ((error as Error).message ?? '').split('\n')[0].slice(0, 200);
    throw new DocumentError(`the document is neither JSON nor YAML${first ? ` (${first})` : ''}`);
  }
}

function fromValue(root: unknown): ApiDocument {
  if (!isObject(root)) throw new DocumentError('not an OpenAPI document: it is not an object');
  const openapi = root.openapi;
  const swagger = root.swagger;
  let version: string;
  if (openapi !== undefined) {
    if (typeof openapi !== 'string' || !/^3\.\d+/.test(openapi)) throw new DocumentError(`OpenAPI version ${String(openapi)} is not supported (3.x is)`);
    version = `OpenAPI ${openapi}`;
  } else if (swagger !== undefined) {
    if (String(swagger) !== '2.0') throw new DocumentError(`Swagger version ${String(swagger)} is not supported (2.0 is)`);
    version = 'Swagger 2.0';
  } else {
    throw new DocumentError('not an OpenAPI document: it has neither an "openapi" nor a "swagger" field');
  }
  if (root.paths !== undefined && !isObject(root.paths)) throw new DocumentError('not an OpenAPI document: "paths" is not an object');
  const v2 = swagger !== undefined;
  const refs = new Resolver(root);
  const info = isObject(root.info) ? root.info : {};
  const declaredTags = Array.isArray(root.tags) ? root.tags.flatMap((t) => (isObject(t) && text(t.name) ? [text(t.name) as string] : [])) : [];
  const globalConsumes = stringList(root.consumes);
  const globalProduces = stringList(root.produces);
  const operations: Operation[] = [];
  for (const [path, rawItem] of Object.entries(isObject(root.paths) ? root.paths : {})) {
    const item = refs.follow(rawItem);
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of Object.keys(item)) {
      if (!(METHODS as readonly string[]).includes(method.toLowerCase())) continue;
      const op = refs.follow(item[method]);
      if (!isObject(op)) continue;
      const params = mergeParameters(refs, shared, Array.isArray(op.parameters) ? op.parameters : []);
      const consumes = stringList(op.consumes) ?? globalConsumes ?? ['application/json'];
      const produces = stringList(op.produces) ?? globalProduces ?? ['application/json'];
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: text(op.operationId),
        summary: text(op.summary),
        description: text(op.description),
        tags: Array.isArray(op.tags) ? [...new Set(op.tags.flatMap((t) => (text(t) ? [text(t) as string] : [])))] : [],
        deprecated: op.deprecated === true,
        parameters: params.filter((p) => !(v2 && p.in === 'body')).map((p) => parameterOf(refs, p, v2)),
        requestBody: v2 ? bodyParameter(refs, params, consumes) : requestBodyOf(refs, op.requestBody),
        responses: responsesOf(refs, op.responses, v2 ? produces : null),
      });
    }
  }
  return { version, title: text(info.title), declaredTags, operations };
}

/** Path-level parameters, overridden by the operation's own of the same name and location. */
function mergeParameters(refs: Resolver, shared: unknown[], own: unknown[]): Json[] {
  const merged = new Map<string, Json>();
  for (const raw of [...shared, ...own]) {
    const p = refs.follow(raw);
    if (!isObject(p) || !text(p.name)) continue;
    merged.set(`${String(p.in)}\u0000${String(p.name)}`, p);
  }
  return [...merged.values()];
}

function parameterOf(refs: Resolver, p: Json, v2: boolean): OperationParameter {
  // 3.x puts the type in `schema` (or in `content` for a complex one); 2.0 on the parameter itself.
  let type = v2 && p.in !== 'body' ? typeName(refs, p) : null;
  if (!type && p.schema !== undefined) type = typeName(refs, p.schema);
  if (!type && isObject(p.content)) {
    const [media] = Object.values(p.content);
    if (isObject(media)) type = typeName(refs, media.schema);
  }
  return {
    name: String(p.name),
    in: text(p.in) ?? 'query',
    required: p.required === true || p.in === 'path',
    type,
    description: text(p.description),
  };
}

function requestBodyOf(refs: Resolver, raw: unknown): Operation['requestBody'] {
  const body = refs.follow(raw);
  if (!isObject(body)) return null;
  return { required: body.required === true, description: text(body.description), media: mediaOf(refs, body.content) };
}

/** Swagger 2.0: the `body` parameter, else the form parameters, as a request body. */
function bodyParameter(refs: Resolver, params: Json[], consumes: string[]): Operation['requestBody'] {
  const body = params.find((p) => p.in === 'body');
  if (body)
    return {
      required: body.required === true,
      description: text(body.description),
      media: consumes.map((type) => ({ type, schema: typeName(refs, body.schema) })),
    };
  const form = params.filter((p) => p.in === 'formData');
  if (!form.length) return null;
  const formTypes = consumes.filter((c) => c === 'multipart/form-data' || c === 'application/x-www-form-urlencoded');
  return {
    required: form.some((p) => p.required === true),
    description: null,
    media: (formTypes.length ? formTypes : ['application/x-www-form-urlencoded']).map((type) => ({ type, schema: null })),
  };
}

function responsesOf(refs: Resolver, raw: unknown, produces: string[] | null): OperationContent[] {
  const responses = refs.follow(raw);
  if (!isObject(responses)) return [];
  return Object.entries(responses).flatMap(([status, value]) => {
    if (status.startsWith('x-')) return [];
    const response = refs.follow(value);
    if (!isObject(response)) return [{ key: status, description: null, media: [] }];
    const media =
      produces === null
        ? mediaOf(refs, response.content)
        : response.schema === undefined
          ? []
          : produces.map((type) => ({ type, schema: typeName(refs, response.schema) }));
    return [{ key: status, description: text(response.description), media }];
  });
}

function mediaOf(refs: Resolver, content: unknown): { type: string; schema: string | null }[] {
  if (!isObject(content)) return [];
  return Object.entries(content).map(([type, media]) => ({ type, schema: isObject(media) ? typeName(refs, media.schema) : null }));
}

/** A schema in a few words: its name when it is a `$ref`, else its type (arrays as `T[]`). */
function typeName(refs: Resolver, raw: unknown, depth = 0): string | null {
  if (!isObject(raw) || depth > 5) return null;
  if (typeof raw.$ref === 'string') return refName(raw.$ref);
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = raw[key];
    if (Array.isArray(options) && options.length) {
      const names = options.map((o) => typeName(refs, o, depth + 1)).filter((n): n is string => !!n);
      if (names.length) return [...new Set(names)].join(' | ');
    }
  }
  if (Array.isArray(raw.allOf) && raw.allOf.length === 1) return typeName(refs, raw.allOf[0], depth + 1);
  const type = Array.isArray(raw.type) ? raw.type.filter((t) => t !== 'null').join(' | ') : text(raw.type);
  if (type === 'array') {
    const items = typeName(refs, raw.items, depth + 1);
    return items ? `${items.includes(' | ') ? `(${items})` : items}[]` : 'array';
  }
  if (!type) return raw.properties !== undefined || raw.allOf !== undefined ? 'object' : null;
  const format = text(raw.format);
  return format ? `${type} (${format})` : type;
}

/** `#/components/schemas/Pet` → `Pet`; an external reference as written. */
function refName(ref: string): string {
  const hash = ref.indexOf('#');
  if (hash === -1) return ref;
  const last =
    ref
      .slice(hash + 1)
      .split('/')
      .pop() ?? '';
  return decodePointerToken(last) || ref;
}

function stringList(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  const list = value.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  return list.length ? list : null;
}

function decodePointerToken(token: string): string {
  let decoded = token;
  try {
    decoded = decodeURIComponent(token);
  } catch {
    // Not percent-encoded: taken as written.
  }
  return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Follows local `$ref`s (`#/components/parameters/Id`); anything else is left as it is. */
class Resolver {
  constructor(private readonly root: Json) {}

  /** The value a chain of references leads to; the reference itself when it cannot be followed. */
  follow(value: unknown): unknown {
    let current = value;
    // A short chain only: references that loop stop here rather than spin.
    for (let hops = 0; hops < 16; hops++) {
      if (!isObject(current) || typeof current.$ref !== 'string') return current;
      const target = this.pointer(current.$ref);
      if (target === undefined) return current;
      current = target;
    }
    return current;
  }

  private pointer(ref: string): unknown {
    if (!ref.startsWith('#')) return undefined;
    const path = ref.slice(1);
    if (path === '') return this.root;
    if (!path.startsWith('/')) return undefined;
    let node: unknown = this.root;
    for (const token of path.slice(1).split('/').map(decodePointerToken)) {
      if (Array.isArray(node) && /^\d+$/.test(token)) node = node[Number(token)];
      else if (isObject(node) && Object.hasOwn(node, token)) node = node[token];
      else return undefined;
    }
    return node;
  }
}
