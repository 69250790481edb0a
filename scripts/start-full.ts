// `npm run start:full`: run the server against the engines started by
// `npm run services`, whose addresses are read from .services/env.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENV_FILE, PROJECT_ROOT } from './services/paths.js';

if (!fs.existsSync(ENV_FILE)) {
  console.error(`${ENV_FILE} not found: start the services first with \`npm run services\` (in another terminal), then run \`npm run start:full\`.`);
  process.exit(1);
}

const env: NodeJS.ProcessEnv = { ...process.env };
for (const line of fs.readFileSync(ENV_FILE, 'utf8').split('\n')) {
  const eq = line.indexOf('=');
  if (eq > 0) env[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
}

const tsxCli = path.join(PROJECT_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const child = spawn(process.execPath, [tsxCli, path.join(PROJECT_ROOT, 'server', 'main.ts')], {
  cwd: PROJECT_ROOT,
  env,
  stdio: 'inherit',
});
// Forward signals so the server can shut down gracefully; exit with its status.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  });
}
child.on('exit', (code, signal) => {
  process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 0));
});
