// What a handler receives: the validated request parts, who is calling, and the engines.
// The generated handler registry picks the context of each operation from its contract:
// public, caller-only, organization-scoped or dataset-scoped.
import type { Caller } from './auth/caller.js';
import type { DatasetRow } from './domain/datasets.js';
import type { Services } from './services.js';

interface RequestShape {
  body?: unknown;
  path?: unknown;
  query?: unknown;
  headers?: unknown;
}

export interface PublicContext<D extends RequestShape> {
  body: D['body'];
  path: D['path'];
  query: D['query'];
  headers: D['headers'];
  services: Services;
  /** Aborted when the client goes away before the reply is over. */
  signal: AbortSignal;
}

/** A text reply sent as it is made (a model's answer): each part is written as it comes. */
export class TextStream {
  constructor(
    readonly parts: AsyncIterable<string>,
    readonly contentType = 'text/plain; charset=utf-8',
  ) {}

  /** A whole text sent as text (a string body goes out as a JSON string). */
  static whole(text: string, contentType?: string): TextStream {
    return new TextStream(
      (async function* () {
        yield text;
      })(),
      contentType,
    );
  }
}

export interface CallerContext<D extends RequestShape> extends PublicContext<D> {
  caller: Caller;
}

export interface OrganizationContext<D extends RequestShape> extends CallerContext<D> {
  /** The organization named by `SVC-Organization`, which the caller belongs to. */
  organizationId: string;
}

export interface DatasetContext<D extends RequestShape> extends OrganizationContext<D> {
  /** The dataset named by `SVC-Dataset`, which the caller may use. */
  dataset: DatasetRow;
}
