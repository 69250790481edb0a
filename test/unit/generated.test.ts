// Generated files are committed; regenerating must not change them.
import { createClient } from '@hey-api/openapi-ts';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleContract } from '../../scripts/contract/bundle.js';
import { clientConfig, generatedClients } from '../../scripts/contract/clients.js';
import { renderHandlers } from '../../scripts/contract/handlers.js';
import { projectPath } from '../../scripts/contract/paths.js';

async function listFiles(dir: string, base = dir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name), base) : [path.relative(base, path.join(dir, e.name))])),
  );
  return nested.flat().sort();
}

describe('npm run generate changes nothing', () => {
  it('bundled contract and handler registry', async () => {
    const doc = await bundleContract(projectPath('openapi'));
    expect(await readFile(projectPath('generated/openapi.json'), 'utf8')).toBe(JSON.stringify(doc, null, 2) + '\n');
    expect(await readFile(projectPath('generated/handlers.ts'), 'utf8')).toBe(renderHandlers(doc));
  });

  it.each(generatedClients)('client in $folder', async (client) => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'sdk-'));
    try {
      await createClient(clientConfig(client, projectPath('generated/openapi.json'), out, 'silent'));
      const committed = projectPath(client.folder);
      const files = await listFiles(out);
      expect(await listFiles(committed)).toEqual(files);
      for (const file of files) {
        expect(await readFile(path.join(committed, file), 'utf8'), file).toBe(await readFile(path.join(out, file), 'utf8'));
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('the contract is OpenAPI 3.1 at version 0.13.0 with the scoping headers of the spec', async () => {
    const doc = await bundleContract(projectPath('openapi'));
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('0.13.0');
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    expect(doc.components.parameters.DatasetHeader).toMatchObject({ name: 'SVC-Dataset', in: 'header', schema: { type: 'string' } });
    expect(doc.components.parameters.DatasetHeader.schema.format).toBeUndefined();
    expect(doc.components.parameters.OrganizationHeader).toMatchObject({ name: 'SVC-Organization', in: 'header' });
  });
});
