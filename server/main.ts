// Starts the service: configuration, engines, HTTP server; stops cleanly on SIGINT/SIGTERM.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { handlers } from './handlers/index.js';
import { answerClientError } from './http/clientError.js';
import { createLogger } from './log.js';
import { openServices, type Services } from './services.js';

export interface RunningService {
  url: string;
  services: Services;
  stop(): Promise<void>;
}

/**
 * Connection timeouts. Node's default keep-alive of 5 s races clients that reuse a socket idle for
 * about that long (the server closes it as their request arrives: a reset), so the server keeps idle
 * sockets longer than common client and proxy idle times (60 s) and lets the client close first;
 * it announces the figure in `Keep-Alive: timeout=75`. The whole request (a 1 GB upload included)
 * must arrive within 15 minutes.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 75_000;
const HEADERS_TIMEOUT_MS = KEEP_ALIVE_TIMEOUT_MS + 1_000;
const REQUEST_TIMEOUT_MS = 15 * 60_000;
/** How long stop() lets requests in flight finish before it cuts their connections. */
const STOP_GRACE_MS = 10_000;

/** The port could not be listened on (in use, or not allowed); the message names it. */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'ListenError';
  }
}

/** Listens, then opens the engines; used by `npm start`, the tests and the benchmark. */
export async function startService(config: Config): Promise<RunningService> {
  const logger = createLogger(config.logLevel);
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS });
  // The port comes first: an instance that cannot serve stops before it opens the database (PGlite
  // must never be opened twice) or resumes any job. Until the engines are open, requests get 503.
  const starting = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ message: 'the service is starting' }));
  };
  server.on('request', starting);
  // Requests Node refuses before any handler (headers too large, malformed) get the {message} body too.
  server.on('clientError', answerClientError);
  await listen(server, config.port, config.host);
  let services: Services;
  try {
    services = await openServices(config, logger);
  } catch (error) {
    await new Promise((resolve) => server.close(resolve));
    throw error;
  }
  let stopping = false;
  const inFlight = new Set<ServerResponse>();
  const app = createApp(services, handlers, logger);
  server.off('request', starting);
  server.on('request', (req, res) => {
    // Once stopping, each answer closes its connection, so no client sends on a socket about to close.
    if (stopping) res.shouldKeepAlive = false;
    else {
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
    }
    app(req, res);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  // Signed file links point here unless PUBLIC_URL says where clients reach the service.
  services.config.publicUrl ??= `http://${host}:${port}`;
  return {
    url: `http://${host}:${port}`,
    services,
    stop: async () => {
      stopping = true;
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      await closeServer(server);
      await services.close();
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      server.off('listening', listening);
      const where = `port ${port} on ${host}`;
      if (error.code === 'EADDRINUSE')
        reject(new ListenError(`cannot listen on ${where}: it is already in use (another instance?); set PORT to a free port`, error.code));
      else if (error.code === 'EACCES') reject(new ListenError(`cannot listen on ${where}: permission denied; set PORT to a port above 1023`, error.code));
      else reject(new ListenError(`cannot listen on ${where}: ${error.message}`, error.code));
    };
    const listening = () => {
      server.off('error', failed);
      resolve();
    };
    server.once('error', failed);
    server.once('listening', listening);
    server.listen(port, host);
  });
}

/**
 * Stops listening and lets requests in flight finish: idle keep-alive connections close now, the
 * others as soon as their answer is sent (no later than STOP_GRACE_MS, when the rest are cut).
 */
async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  const cut = setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
  const logger = createLogger(config.logLevel);
  if (!config.adminApiKey) logger.warn('ADMIN_API_KEY is not set: no one can create organizations or API keys');
  let service: RunningService;
  try {
    service = await startService(config);
  } catch (error) {
    // A setting the machine cannot honour: the message says which, no stack needed.
    if (!(error instanceof ListenError || error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(error instanceof ConfigError ? 2 : 1);
  }
  const { store, lexical, workflows, defaultEmbedder } = service.services;
  logger.info(
    { store: store.kind, lexical: lexical.kind, workflows: workflows.kind, embedder: defaultEmbedder, startup_ms: Date.now() - started },
    `listening on ${service.url} (API reference at ${service.url}/docs)`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping`);
    await service.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  });
}
