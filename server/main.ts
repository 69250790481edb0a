// Starts the service: configuration, engines, HTTP server; stops cleanly on SIGINT/SIGTERM.
import type { Server } from 'node:http';
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

/** Opens the engines and listens; used by `npm start`, the tests and the benchmark. */
export async function startService(config: Config): Promise<RunningService> {
  const logger = createLogger(config.logLevel);
  const services = await openServices(config, logger);
  const app = createApp(services, handlers, logger);
  let server: Server;
  try {
    server = await new Promise((resolve, reject) => {
      const s = app.listen(config.port, config.host, () => resolve(s));
      s.once('error', reject);
    });
  } catch (error) {
    await services.close();
    throw error;
  }
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
  const service = await startService(config);
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
