// Starts the service: configuration, engines, HTTP server; stops cleanly on SIGINT/SIGTERM.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { handlers } from './handlers/index.js';
import { createLogger } from './log.js';
import { openServices, type Services } from './services.js';

export interface RunningService {
  url: string;
  services: Services;
  stop(): Promise<void>;
}

/** The port could not be listened on (in use, or not allowed); the message names it. */
export class ListenError extends Error {
  constructor(message: string, readonly code: string | undefined) {
    super(message);
    this.name = 'ListenError';
  }
}

/** Listens, then opens the engines; used by `npm start`, the tests and the benchmark. */
export async function startService(config: Config): Promise<RunningService> {
  const logger = createLogger(config.logLevel);
  const server = createServer();
  // The port comes first: an instance that cannot serve stops before it opens the database (PGlite
  // must never be opened twice) or resumes any job. Until the engines are open, requests get 503.
  const starting = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ message: 'the service is starting' }));
  };
  server.on('request', starting);
  await listen(server, config.port, config.host);
  let services: Services;
  try {
    services = await openServices(config, logger);
  } catch (error) {
    await new Promise((resolve) => server.close(resolve));
    throw error;
  }
  server.off('request', starting);
  server.on('request', createApp(services, handlers, logger));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  // Signed file links point here unless PUBLIC_URL says where clients reach the service.
  services.config.publicUrl ??= `http://${host}:${port}`;
  return {
    url: `http://${host}:${port}`,
    services,
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections would hold close() open; requests in flight still finish.
      server.closeIdleConnections();
      await closed;
      await services.close();
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      server.off('listening', listening);
      const where = `port ${port} on ${host}`;
      if (error.code === 'EADDRINUSE') reject(new ListenError(`cannot listen on ${where}: it is already in use (another instance?); set PORT to a free port`, error.code));
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
    if (!(error instanceof ListenError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const { store, lexical, workflows } = service.services;
  logger.info(
    { store: store.kind, lexical: lexical.kind, workflows: workflows.kind, startup_ms: Date.now() - started },
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
