// The README's getting-started, run as a newcomer runs it: its ```sh getting-started blocks, in
// order, in one bash session against a running service (started here, in-process, with a stand-in
// chat endpoint instead of the `npm start` the README's first block shows). Every command must
// succeed: bash stops at the first that fails, and curl fails on any HTTP error.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../scripts/contract/paths.js';
import { loadConfig } from '../../server/config.js';
import { startLlmStandIn } from '../support/llmStandIn.js';
import { ADMIN_KEY, startTestService } from '../support/service.js';

const readme = await readFile(projectPath('README.md'), 'utf8');
const blocks = [...readme.matchAll(/^```sh getting-started\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
const startLine = readme.match(/^```sh\n(ADMIN_API_KEY=\S+ npm start)\n```$/m)?.[1];
const MARK = '=== getting-started block ';
const hasCurl = await run('sh', ['-c', 'command -v curl'], {}).then((r) => r.code === 0);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the README getting-started', () => {
  it('starts the service with npm start, on the port and with the key its blocks use', async () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    expect(startLine).toBeDefined();
    const packageJson = JSON.parse(await readFile(projectPath('package.json'), 'utf8'));
    expect(packageJson.scripts.start).toMatch(/server\/main\.ts$/);
    const key = startLine!.match(/^ADMIN_API_KEY=(\S+)/)![1];
    const defaults = loadConfig({ ADMIN_API_KEY: key });
    expect(defaults.adminApiKey).toBe(key);
    expect(blocks[0]).toContain(`ADMIN_KEY=\${ADMIN_KEY:-${key}}`);
    expect(blocks[0]).toContain(`BASE=\${BASE:-http://localhost:${defaults.port}}`);
  });

  it.skipIf(!hasCurl)(
    'runs block by block, every command succeeding, and finds what it added',
    async () => {
      const llm = await startLlmStandIn();
      llm.otherwise = { kind: 'answer', text: 'A refund reaches your card within 5 business days of the parcel arriving.' };
      const service = await startTestService({ LLM_BASE_URL: llm.url, LLM_DEFAULT_MODEL: 'gpt-4o-mini' });
      const dir = await mkdtemp(path.join(os.tmpdir(), 'readme-'));
      try {
        // What the README's reader has: bash and curl; curl made to fail (with the answer's body) on an HTTP error.
        const script = [
          'set -euo pipefail',
          'curl() { command curl --fail-with-body -sS "$@"; }',
          // A block's last answer may end without a line break: each mark starts a line of its own.
          ...blocks.flatMap((block, i) => [`printf '\\n${MARK}${i}\\n'`, block]),
        ].join('\n');
        const ran = await run('bash', ['-c', script], { cwd: dir, env: { ...process.env, BASE: service.url, ADMIN_KEY } });
        const outputs = ran.stdout.split(new RegExp(`\\n${MARK}\\d+\\n`)).slice(1);
        const failed = outputs.length - 1;
        expect(ran.code, `block ${failed} failed:\n${blocks[failed]}\n--- stdout:\n${outputs[failed]}\n--- stderr:\n${ran.stderr}`).toBe(0);
        expect(outputs).toHaveLength(blocks.length);

        const output = ran.stdout;
        expect(output).toMatch(/^organization [0-9a-f-]{36}$/m);
        expect(output).toMatch(/^dataset [0-9a-f-]{36}$/m);
        // Each search type finds the article about refunds first.
        for (const type of ['semantic', 'fulltext', 'bm25', 'hybrid']) expect(output).toMatch(new RegExp(`^${type}: \\[ 'article-returns'`, 'm'));
        // The file's ingestion is watched to its end, and its chunk is then found.
        expect(output).toMatch(/^file_uploaded \{"file_id":"[0-9a-f-]{36}".*"file_name":"warranty\.txt","chunks_created":1\}$/m);
        expect(output.replace(/<[^>]+>/g, '')).toContain('Every Northwind boot carries a two-year warranty');
        // The question was answered from the dataset's chunks.
        expect(output.trimEnd().endsWith(llm.otherwise.text)).toBe(true);
        expect(JSON.stringify(llm.received.at(-1)?.body.messages)).toContain('Refunds reach your original payment method');
      } finally {
        await rm(dir, { recursive: true, force: true });
        await service.stop();
        await llm.close();
      }
    },
    60_000,
  );
});
