// Global setup of the `full` project: the real engines, started once for the whole run.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startServices } from '../../scripts/services/index.js';

export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-engines-'));
  const services = await startServices({ dataDir, log: () => {} });
  project.provide('engineEnv', services.env);
  return async () => {
    await services.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    engineEnv: Record<string, string>;
  }
}
