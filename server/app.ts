// The HTTP application: JSON parsing, request validation against the bundled contract, access
// rules, one route per operation, and one error body `{message}` for every failure.
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types.js';
import contract from '../generated/openapi.json' with { type: 'json' };
import { operations, type Handlers, type OperationFacts } from '../generated/handlers.js';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { grantAccess, type Access } from './auth/access.js';
import { TextStream } from './context.js';
import { docsRouter } from './docs.js';
import { HttpError } from './errors.js';
import { httpLogOptions, withoutSecretParams } from './log.js';
import { httpDuration, httpRequests } from './metrics.js';
import { databaseFailure } from './store/errors.js';
import { fileContentRouter } from './http/fileContent.js';
import { pagefindFilesRouter } from './http/pagefindFiles.js';
import { receiveMultipartForm, storeMultipartUpload } from './http/multipart.js';
import { refuseIllFormedInput } from './http/wellFormed.js';
import { rememberRoutePatterns } from './http/routePatterns.js';
import type { InFlight } from './http/inFlight.js';
import type { Services } from './services.js';

type OperationId = keyof Handlers;

export function createApp(services: Services, handlers: Handlers, logger?: Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETags on API answers: the contract declares no 304, and hashing every body costs each request.
  app.disable('etag');
  app.use(countRequests(services.inFlight));
  // pino-http writes its request lines at info; at a higher level it would do its work per request for nothing.
  if (logger?.isLevelEnabled('info')) app.use(pinoHttp({ logger, ...httpLogOptions, autoLogging: { ignore: (req) => req.url === '/api/health' } }));
  app.set('query parser', 'extended');

  app.get('/openapi.json', (_req, res) => {
    res.json(contract);
  });
  app.use('/docs', docsRouter());

  // Signed file links carry raw bytes, not JSON: they come before the JSON parser; so do the
  // static files of Pagefind indexes.
  app.use(fileContentRouter(services));
  app.use(pagefindFilesRouter(services));
  app.use(express.json({ limit: services.config.jsonBodyLimit, strict: false }));
  rememberRoutePatterns();
  const validator = OpenApiValidator.middleware({
    apiSpec: structuredClone(contract) as unknown as OpenAPIV3.DocumentV3,
    validateRequests: { allowUnknownQueryParameters: false },
    // An int64 is read into a JavaScript number, which holds integers exactly up to 2^53 only:
    // beyond, 2^63 would read as 2^63 − 1 does and pass an int64 range check. Such a value is refused
    // (400 naming the field) instead of being rounded into range.
    formats: { int64: { type: 'number', validate: (value: number) => Number.isSafeInteger(value) } },
    // Multipart uploads are streamed by http/multipart.ts; the validator's own reader buffers files in memory.
    fileUploader: false,
    validateResponses: false,
    // Access is checked by our own step below, so its failures keep their status (the
    // validator's security step turns any error without a 4xx status into 401).
    validateSecurity: false,
  });
  // Who calls and what they may do is settled before the body is read or validated; then values no
  // operation can take (NUL, lone surrogates, non-finite numbers, deep nesting) are refused.
  app.use(beforeRequestValidation(validator, [authorize(services), receiveMultipartForm(services), refuseIllFormedInput()]));
  app.use(storeMultipartUpload(services, (req) => accessOf(req).value?.dataset));

  // The validator has matched the request to exactly one operation; dispatch on it rather than route twice.
  app.use(dispatch(services, handlers));

  app.use((req, _res, next) => next(new HttpError(404, `no route ${req.method} ${req.path}`)));
  app.use(errorBody(logger));
  return app;
}

/** Each request counted while in flight, and once answered in the metrics, by the operation the validator matched it to. */
function countRequests(inFlight: InFlight): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    inFlight.track(res);
    res.on('finish', () => {
      const operation = openapiOf(req)?.schema.operationId ?? 'unmatched';
      const status = String(res.statusCode);
      httpRequests.inc({ operation, method: req.method, status });
      httpDuration.observe({ operation, status }, (performance.now() - started) / 1000);
    });
    next();
  };
}

/** The validator's steps with `steps` inserted just before its request validation. */
function beforeRequestValidation(validator: RequestHandler[], steps: RequestHandler[]): RequestHandler[] {
  const at = validator.findIndex((m) => m.name === 'requestMiddleware');
  if (at < 0) throw new Error('express-openapi-validator: its request validation step was not found');
  return [...validator.slice(0, at), ...steps, ...validator.slice(at)];
}

/** The access rules of the matched operation (auth/access.ts); operations without a key pass. */
function authorize(services: Services): RequestHandler {
  return (req, _res, next) => {
    const openapi = openapiOf(req);
    const facts = openapi && (operations[openapi.schema.operationId] as OperationFacts);
    if (!facts || facts.role === null) return next();
    grantAccess(services, facts, {
      authorization: req.get('authorization'),
      datasetHeader: req.get('svc-dataset'),
      organizationHeader: req.get('svc-organization'),
    }).then((access) => {
      accessOf(req).value = access;
      next();
    }, next);
  };
}

type AnyHandler = (ctx: Record<string, unknown>) => Promise<{ status: number; body?: unknown; headers?: Record<string, string> }>;

function dispatch(services: Services, handlers: Handlers): RequestHandler {
  return async (req, res, next) => {
    const openapi = openapiOf(req);
    if (!openapi) return next();
    const handler = handlers[openapi.schema.operationId] as unknown as AnyHandler;
    const access = accessOf(req).value;
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const reply = await handler({
      body: req.body,
      path: openapi.pathParams,
      query: req.query,
      headers: declaredHeaders(req, openapi.schema.parameters),
      services,
      caller: access?.caller,
      organizationId: access?.organizationId,
      dataset: access?.dataset,
      signal: gone.signal,
    });
    res.status(reply.status).set(reply.headers ?? {});
    if (reply.body instanceof TextStream) await sendStream(res, reply.body);
    else if (reply.body === undefined) res.end();
    else res.json(reply.body);
  };
}

/**
 * Writes the stream's parts as they come. A failure once the first part is out cannot change the
 * status any more: the connection is cut, so the client sees an answer that did not end rather
 * than a complete one.
 */
async function sendStream(res: Response, stream: TextStream): Promise<void> {
  res.type(stream.contentType);
  res.flushHeaders();
  try {
    for await (const part of stream.parts) {
      if (res.destroyed) return;
      res.write(part);
    }
    res.end();
  } catch {
    res.destroy();
  }
}

interface MatchedOperation {
  schema: { operationId: OperationId; parameters?: { in: string; name: string; $ref?: string }[] };
  pathParams: Record<string, string>;
}

/** What express-openapi-validator attached: the matched operation and its path parameters. */
function openapiOf(req: Request): MatchedOperation | undefined {
  return (req as unknown as { openapi?: MatchedOperation }).openapi;
}

/** The operation's headers under the names the contract spells them (Node lower-cases them). */
function declaredHeaders(req: Request, parameters: MatchedOperation['schema']['parameters'] = []): Record<string, string | undefined> {
  return Object.fromEntries(
    parameters
      .map(resolveParameter)
      .filter((p) => p.in === 'header')
      .map((p) => [p.name, req.get(p.name)]),
  );
}

function resolveParameter(parameter: { in: string; name: string; $ref?: string }): { in: string; name: string } {
  if (!parameter.$ref) return parameter;
  const name = parameter.$ref.split('/').pop()!;
  return (contract.components.parameters as Record<string, { in: string; name: string }>)[name];
}

const accessKey = Symbol('access');
function accessOf(req: Request): { value: Access | undefined } {
  const holder = req as unknown as Record<symbol, { value: Access | undefined }>;
  holder[accessKey] ??= { value: undefined };
  return holder[accessKey];
}

/** Every failure, whoever raised it, becomes its status with `{message}`; server errors are logged. */
const errorBody =
  (logger: Logger | undefined): ErrorRequestHandler =>
  (error, req, res, _next) => {
    const { status, message } = describe(error, req);
    // The validator's own words for an unknown route are just "not found".
    if (status === 404 && message === 'not found') return res.status(404).json({ message: `no route ${req.method} ${req.path}` });
    if (status >= 500) {
      // Without pino-http's request logger, the request is named here.
      const log = req.log ?? logger?.child({ req: { method: req.method, url: withoutSecretParams(req.originalUrl) } });
      log?.error({ err: error }, 'request failed');
    }
    if (res.headersSent) return res.end();
    // A 405 says which methods the path takes (the validator lists them, lower-cased).
    const allow = (error as { headers?: { Allow?: string } })?.headers?.Allow;
    if (status === 405 && allow) res.set('Allow', allow.toUpperCase());
    res.status(status).json({ message });
  };

function describe(error: unknown, req: Request): { status: number; message: string } {
  if (error instanceof HttpError) return { status: error.status, message: error.message };
  const database = databaseFailure(error);
  if (database) return database;
  const e = error as { status?: number; statusCode?: number; type?: string; message?: string; limit?: number };
  if (e?.type === 'entity.parse.failed') return { status: 400, message: `the request body is not valid JSON: ${e.message}` };
  if (e?.type === 'entity.too.large') {
    const hint = req.path === '/api/file' ? '; send a large file as multipart/form-data instead of base64 in JSON' : '';
    return { status: 413, message: `the request body is over the limit of ${e.limit} bytes${hint}` };
  }
  const status = e?.status ?? e?.statusCode;
  // express-openapi-validator's messages name each violation and where it is.
  if (status && status >= 400 && status < 500) return { status, message: e.message || 'bad request' };
  return { status: 500, message: 'internal error' };
}
