// Multipart uploads of POST /api/file, streamed: the file part goes straight into storage, never
// whole in memory. Two steps around the contract's request validation:
//  - receiveMultipartForm (after routing and access checks, before validation) reads the form up to
//    the file part, then sets the option fields (parsed by their contract types) as the request
//    body, so that the validator checks them before a byte of the file is stored;
//  - storeMultipartUpload (after validation) streams the file part into the upload.
// The option fields must come before the file part; a field after it, a field that is no option
// of an upload, or a second file part refuses the upload.
import busboy from 'busboy';
import type { RequestHandler, Request } from 'express';
import { PassThrough, type Readable } from 'node:stream';
import contract from '../../generated/openapi.json' with { type: 'json' };
import type { DatasetRow } from '../domain/datasets.js';
import { describeFile } from '../domain/files/options.js';
import { fileRecord } from '../domain/files/records.js';
import { storeNewFile } from '../domain/files/upload.js';
import { badRequest, HttpError, payloadTooLarge } from '../errors.js';
import type { Services } from '../services.js';
import { closeAfterEarlyAnswer } from './earlyAnswer.js';

/** The multipart framing and option fields may add this much to the file's own size. */
const FORM_OVERHEAD_BYTES = 1024 ** 2;
const FIELD_LIMIT_BYTES = 1024 ** 2;

interface PendingUpload {
  fileName: string | null;
  mimeType: string | null;
  /** The file part, ending only once the whole form is read and found well-formed. */
  stream: Readable;
}

const pendingKey = Symbol('multipart upload');

function pendingUploadOf(req: Request): PendingUpload | undefined {
  return (req as unknown as Record<symbol, PendingUpload | undefined>)[pendingKey];
}

interface MatchedOperation {
  schema: { operationId: string; requestBody?: { content?: Record<string, unknown> } };
}

function isMultipartUpload(req: Request): boolean {
  const openapi = (req as unknown as { openapi?: MatchedOperation }).openapi;
  return openapi?.schema.operationId === 'upload_file_handler' && req.is('multipart/form-data') === 'multipart/form-data';
}

export function receiveMultipartForm(services: Services): RequestHandler {
  const fieldTypes = formFieldTypes('UploadFileForm');
  return (req, res, next) => {
    if (!isMultipartUpload(req)) return next();
    const limit = services.config.fileUploadLimit;
    const declared = Number(req.get('content-length') ?? NaN);
    if (declared > limit + FORM_OVERHEAD_BYTES) {
      return next(payloadTooLarge(`file: the upload of ${declared} bytes is over the upload limit of ${limit} bytes`));
    }
    closeAfterEarlyAnswer(req, res);

    let form: busboy.Busboy;
    try {
      // File names in UTF-8, as browsers and fetch send them (busboy's default reads them as Latin-1).
      // Two files are let through, so that a second file part is refused by its name.
      form = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 2, fields: 50, parts: 52, fieldSize: FIELD_LIMIT_BYTES } });
    } catch (error) {
      return next(badRequest(`the multipart body cannot be read: ${(error as Error).message}`));
    }
    const fields: Record<string, unknown> = {};
    /** What is wrong with the rest of the form once the file part has been handed on: it fails the file part. */
    const lateProblems: HttpError[] = [];
    let upload: PendingUpload | null = null;
    let handedOn = false;
    const handOn = (error?: unknown) => {
      if (handedOn) return;
      handedOn = true;
      next(error);
    };
    const refuse = (error: HttpError) => (handedOn ? lateProblems.push(error) : handOn(error));
    // Settles when the whole form has been read: the file part's stream waits for it before ending.
    const formRead = new Promise<void>((resolve, reject) => {
      form.on('close', resolve);
      form.on('error', (error: Error) => reject(badRequest(`the multipart body is malformed: ${error.message}`)));
    });
    formRead.catch((error) => handOn(error));

    form.on('field', (name, value, info) => {
      if (info.valueTruncated) return refuse(payloadTooLarge(`${name}: the field is over ${FIELD_LIMIT_BYTES} bytes`));
      if (!(name in fieldTypes) || name === 'file')
        return refuse(badRequest(`${name}: not an option of an upload (the options are ${optionNames(fieldTypes)})`));
      if (upload) refuse(badRequest(`${name}: option fields must come before the file part`));
      else fields[name] = parseField(value, fieldTypes[name]);
    });
    form.on('file', (name, stream, info) => {
      stream.on('error', () => {}); // a part refused below is drained, and may fail as the form does
      if (upload) {
        stream.resume();
        return refuse(badRequest(`${name}: a second file part; send one file per upload`));
      }
      if (name !== 'file') {
        stream.resume();
        return refuse(badRequest(`${name}: the file part must be named file`));
      }
      upload = { fileName: info.filename ?? null, mimeType: info.mimeType ?? null, stream: endAfter(stream, formRead, lateProblems) };
      (req as unknown as Record<symbol, PendingUpload>)[pendingKey] = upload;
      req.body = { ...fields, file: info.filename ?? 'file' };
      handOn();
    });
    form.on('close', () => {
      if (!upload) handOn(badRequest('file: the form has no file part (send the option fields, then the file part named file)'));
    });
    for (const event of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      form.on(event, () => refuse(payloadTooLarge(`the form has too many parts: at most 50 option fields and one file`)));
    }
    // A client gone mid-upload: the form fails, and with it the file part (storage keeps nothing).
    req.on('close', () => {
      if (!req.complete) form.destroy(new Error('the client closed the connection before the form ended'));
    });
    req.pipe(form);
  };
}

export function storeMultipartUpload(services: Services, datasetOf: (req: Request) => DatasetRow | null | undefined): RequestHandler {
  return async (req, res, next) => {
    const upload = pendingUploadOf(req);
    if (!upload) return next();
    const dataset = datasetOf(req);
    if (!dataset) return next(new HttpError(500, 'a multipart upload reached storage without its dataset'));
    const { file: _file, file_name: fileName, ...options } = req.body as Record<string, unknown>;
    const description = describeFile((fileName as string | undefined) ?? upload.fileName, options as Parameters<typeof describeFile>[1]);
    const row = await storeNewFile(services, dataset, description, { stream: upload.stream, field: 'file', declaredType: upload.mimeType });
    res.status(200).json({ file_metadata: fileRecord(row) });
  };
}

/**
 * The file part's bytes, ending only after the rest of the form has been read: an error in the
 * form, or anything wrong after the file part (a field, a second file), fails the stream, so the
 * storage keeps nothing.
 */
function endAfter(part: Readable, formRead: Promise<void>, lateProblems: HttpError[]): Readable {
  const out = new PassThrough({
    flush(done) {
      formRead.then(
        () => done(lateProblems[0] ?? null),
        (error) => done(error),
      );
    },
  });
  part.on('error', (error) => out.destroy(error));
  // The form can fail before the upload reads this stream; the reader gets the error when it starts.
  out.on('error', () => {});
  return part.pipe(out);
}

function optionNames(fieldTypes: Record<string, string[]>): string {
  return Object.keys(fieldTypes)
    .filter((name) => name !== 'file')
    .join(', ');
}

/** A form field's text as its contract type: JSON for everything but strings. */
function parseField(value: string, types: string[] | undefined): unknown {
  if (!types || types.includes('string')) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // the validator names the field and the type it wants
  }
}

type Schema = { $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; allOf?: Schema[]; anyOf?: Schema[] };

/** The JSON types of each property of a contract schema, following $ref, allOf and anyOf. */
function formFieldTypes(name: string): Record<string, string[]> {
  const schemas = (contract as unknown as { components: { schemas: Record<string, Schema> } }).components.schemas;
  const resolve = (s: Schema): Schema => (s.$ref ? resolve(schemas[s.$ref.split('/').pop()!]) : s);
  const typesOf = (s: Schema): string[] => {
    const r = resolve(s);
    if (r.anyOf) return r.anyOf.flatMap(typesOf);
    return r.type === undefined ? ['object'] : ([] as string[]).concat(r.type);
  };
  const out: Record<string, string[]> = {};
  const collect = (s: Schema) => {
    const r = resolve(s);
    for (const part of r.allOf ?? []) collect(part);
    for (const [prop, propSchema] of Object.entries(r.properties ?? {})) out[prop] = typesOf(propSchema);
  };
  collect({ $ref: `#/components/schemas/${name}` });
  return out;
}
