// `npm run services`: install (if needed) and run PostgreSQL, Typesense and Temporal
// until Ctrl-C. Prints the environment for the app and writes it to .services/env
// for `npm run start:full`. `--install-only`: just install (CI pre-install).
import fs from 'node:fs';
import { ENV_FILE, installServices, startServices } from './services/index.js';

const log = (line: string) => console.error(line);

async function main(): Promise<void> {
  if (process.argv.includes('--install-only')) {
    const t0 = Date.now();
    await installServices({ log });
    log(`services installed (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
    return;
  }
  const services = await startServices({ log });
  const lines = Object.entries(services.env).map(([k, v]) => `${k}=${v}`);
  fs.writeFileSync(ENV_FILE, lines.join('\n') + '\n');
  console.log(lines.join('\n'));
  console.log(`\nTemporal Web UI: ${services.temporalUiUrl}`);
  console.log(`Written to ${ENV_FILE}; run \`npm run start:full\` in another terminal. Ctrl-C stops the services.`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`\n${signal}: stopping services...`);
    try {
      await services.stop();
    } finally {
      fs.rmSync(ENV_FILE, { force: true });
    }
    log('services stopped');
    process.exit(0);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void shutdown(sig));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
