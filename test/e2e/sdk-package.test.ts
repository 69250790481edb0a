// The SDK as its users get it: packed by npm (which builds it), installed from the tarball into a
// project outside the repository, and run from an ES module and a CommonJS script against a
// running service; a consumer's TypeScript type-checked with --strict and NodeNext resolution.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../../sdk/src/generated/sdk.gen.js';
import { projectPath } from '../../scripts/contract/paths.js';
import { type LlmStandIn, startLlmStandIn } from '../support/llmStandIn.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

const run = promisify(execFile);
const ANSWER = 'The Aare, at 288 km.';
const ON_DISK = '# The Limmat\n\nThe Limmat flows through Zurich.\n';

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

let standIn: LlmStandIn;
let service: TestService;
let project: string;
let packed: Packed;
let scriptEnv: Record<string, string>;

/** The environment of a user's shell: none of the npm variables of the `npm test` running this. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_'))) as Record<string, string>;
  return { ...env, ...extra };
}

async function packAndInstall(): Promise<void> {
  project = await mkdtemp(path.join(os.tmpdir(), 'sdk-consumer-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: projectPath('sdk'), env: userEnv(), maxBuffer: 16 << 20 });
  [packed] = JSON.parse(stdout.slice(stdout.indexOf('[')));
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
  // No runtime dependencies: nothing to fetch.
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', `./${packed.filename}`], { cwd: project, env: userEnv() });
  await cp(projectPath('test/e2e/sdk-consumer'), project, { recursive: true });
  await writeFile(path.join(project, 'on-disk.md'), ON_DISK);
}

beforeAll(async () => {
  const packing = packAndInstall();
  standIn = await startLlmStandIn();
  standIn.otherwise = { kind: 'answer', text: ANSWER };
  service = await startTestService({ LLM_BASE_URL: standIn.url, LLM_DEFAULT_MODEL: 'stand-in-model' });
  const organizationId = (await createOrganization({ client: service.client(), body: { name: 'SDK users' }, throwOnError: true })).data.id;
  const dataset = await service.newDataset(organizationId, 'rivers');
  await packing;
  scriptEnv = {
    SDK_BASE_URL: service.url,
    SDK_API_KEY: ADMIN_KEY,
    SDK_DATASET_ID: dataset.id,
    SDK_ORGANIZATION_ID: organizationId,
    SDK_FILE: path.join(project, 'on-disk.md'),
  };
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await standIn?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

async function runScript(file: string): Promise<any> {
  const { stdout } = await run(process.execPath, [file], { cwd: project, env: userEnv(scriptEnv) });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describe('@chunksearch/sdk, packed and installed', () => {
  it('is a small package of its build, README, licence and manifest, with no runtime dependencies', async () => {
    const paths = packed.files.map((f) => f.path);
    const besideBuild = ['README.md', 'LICENSE', 'package.json'];
    for (const file of besideBuild) expect(paths).toContain(file);
    expect(paths.filter((p) => !besideBuild.includes(p)).every((p) => p.startsWith('dist/'))).toBe(true);
    // Mostly the contract's type declarations, once per module system: the bound grows with the
    // contract, and catches a build that ships sources, source maps or dependencies.
    expect(packed.size).toBeLessThan(300_000);
    const manifest = JSON.parse(await readFile(path.join(project, 'node_modules/@chunksearch/sdk/package.json'), 'utf8'));
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.version).toBe('0.13.0');
    expect(manifest.license).toBe('MIT');
  });

  it('imports nothing but its own modules, except its Node.js entry', async () => {
    const installed = path.join(project, 'node_modules/@chunksearch/sdk/dist');
    const scripts = (await readdir(installed, { recursive: true })).filter((f) => f.endsWith('.js'));
    const imports: Record<string, string[]> = {};
    for (const file of scripts) {
      // The code, without its comments (whose examples import the package).
      const text = (await readFile(path.join(installed, file), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      const outside = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g)]
        .map((m) => m[1])
        .filter((s) => !s.startsWith('.'));
      if (outside.length) imports[file] = outside;
    }
    expect(imports).toEqual({ 'cjs/node.js': ['node:fs', 'node:path'], 'esm/node.js': ['node:fs', 'node:path'] });
  });

  it('runs as an ES module', async () => {
    const out = await runScript('esm.mjs');
    expect(out.files).toEqual([
      { name: 'inn.txt', size: 46, tags: ['blob'] },
      { name: 'on-disk.md', size: ON_DISK.length, tags: null },
      { name: 'ticino.md', size: 24, tags: null },
      { name: 'web-stream.txt', size: 46, tags: null },
      { name: 'base64.txt', size: 46, tags: null },
    ]);
    expect(out.onDiskSize).toBe(ON_DISK.length);
    expect(out.streamed).toMatch(/^\[.*\]\|\|The Aare, at 288 km\.$/s);
    expect(out.pieces).toBeGreaterThan(1);
    expect(out.queryId).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.messageRoles).toEqual(['system', 'user', 'assistant']);
    expect(out.ragText).toBe(ANSWER);
    expect(out.ragQueryId).toMatch(/^[0-9a-f-]{36}$/);
    expect(standIn.received.at(-1)!.body.stream).toBe(true);
  });

  it('runs as CommonJS', async () => {
    const out = await runScript('cjs.cjs');
    expect(out).toMatchObject({ refusedStatus: 401, file: 'on-disk.md', whole: ANSWER, health: 'pglite' });
    expect(out.refusedMessage.length).toBeGreaterThan(0);
  });

  it("type-checks a consumer's TypeScript, ES module and CommonJS, with --strict and NodeNext", async () => {
    const tsconfig = {
      compilerOptions: {
        strict: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2022'],
        types: ['node'],
        typeRoots: [projectPath('node_modules/@types')],
        noEmit: true,
        skipLibCheck: false,
      },
      files: ['consumer.mts', 'consumer.cts'],
    };
    await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = projectPath('node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', project], { cwd: project }).catch((error) => error);
    expect(result.stdout).toBe('');
  });
});
