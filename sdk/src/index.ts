// @chunksearch/sdk: the client of the Chunk Search Service, for Node.js, browsers and edge
// runtimes (fetch only). In Node.js, `@chunksearch/sdk/node` adds uploads from a path.
export { ChunkSearch, type ChunkSearchOptions } from './chunk-search.js';
export { type CallResult, ChunkSearchError, type HeadersCallback, unwrap, unwrapResponse } from './errors.js';
export { type Client, type Config, createClient, createConfig } from './generated/client/index.js';
// Every operation of the API as a generated function, and every type of the contract.
export * from './generated/index.js';
export { defaultRetryOptions, type RetryOptions } from './retry.js';
export { TextStream } from './streaming.js';
export type { FileSource, UploadFileMultipart } from './upload.js';
