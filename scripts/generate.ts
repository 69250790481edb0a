// `npm run generate`: bundle the contract, generate the client SDK and the typed handler registry.
import { createClient } from '@hey-api/openapi-ts';
import { mkdir, writeFile } from 'node:fs/promises';
import { bundleContract } from './contract/bundle.js';
import { assertNoTypeNameClashes, renderHandlers } from './contract/handlers.js';
import { projectPath } from './contract/paths.js';

const doc = await bundleContract(projectPath('openapi'));
assertNoTypeNameClashes(doc);
await mkdir(projectPath('generated'), { recursive: true });
const bundled = projectPath('generated/openapi.json');
await writeFile(bundled, JSON.stringify(doc, null, 2) + '\n');

await createClient({
  input: bundled,
  output: { path: projectPath('generated/client'), postProcess: [] },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
  logs: { level: 'warn' },
});

await writeFile(projectPath('generated/handlers.ts'), renderHandlers(doc));
console.log('generated/: openapi.json, client/, handlers.ts');
