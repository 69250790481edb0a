// `npm run generate`: bundle the contract, generate the client SDKs and the typed handler registry.
import { createClient } from '@hey-api/openapi-ts';
import { mkdir, writeFile } from 'node:fs/promises';
import { bundleContract } from './contract/bundle.js';
import { clientConfig, generatedClients } from './contract/clients.js';
import { assertNoTypeNameClashes, renderHandlers } from './contract/handlers.js';
import { projectPath } from './contract/paths.js';

const doc = await bundleContract(projectPath('openapi'));
assertNoTypeNameClashes(doc);
await mkdir(projectPath('generated'), { recursive: true });
const bundled = projectPath('generated/openapi.json');
await writeFile(bundled, JSON.stringify(doc, null, 2) + '\n');

for (const client of generatedClients) {
  await createClient(clientConfig(client, bundled, projectPath(client.folder), 'warn'));
}

await writeFile(projectPath('generated/handlers.ts'), renderHandlers(doc));
console.log(`generated/: openapi.json, handlers.ts; clients in ${generatedClients.map((c) => c.folder + '/').join(', ')}`);
