// Global setup of both projects: one temporary directory for the run, under which every test
// service gets its data directory (env.ts), removed when the run ends so runs leave nothing behind.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

export default async function setup(project: TestProject) {
  const root = await mkdtemp(path.join(os.tmpdir(), `svc-test-${project.name}-`));
  project.provide('testRoot', root);
  return () => rm(root, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    testRoot: string;
  }
}
