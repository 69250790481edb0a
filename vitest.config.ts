import { defineConfig } from 'vitest/config';

// The whole suite runs twice: on the embedded engines, and on the real engines that the
// `full` project's global setup installs and starts (PostgreSQL + pgvector, Typesense, Temporal).
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    fileParallelism: true,
    maxWorkers: 2,
    setupFiles: ['test/support/contract-guard.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'embedded', include: ['test/**/*.test.ts'], env: { TEST_MODE: 'embedded' }, globalSetup: ['test/support/temp-setup.ts'] },
      },
      // Engine-independent tests (unit, e2e of `npm start`) run once, in the embedded project.
      {
        extends: true,
        test: {
          name: 'full',
          include: ['test/http/**/*.test.ts', 'test/engines/**/*.test.ts'],
          env: { TEST_MODE: 'full' },
          globalSetup: ['test/support/temp-setup.ts', 'test/support/services-setup.ts'],
        },
      },
    ],
  },
});
