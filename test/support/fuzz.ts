// A bounded schemathesis run against a running service, and what it found, in words a failing test
// can show: requests sent, operations covered, and each failure with its request and answer.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface FuzzTarget {
  url: string;
  apiKey: string;
  organizationId: string;
  datasetId: string;
  /** Ids the run must not delete (its organization, dataset, user and key): see fuzz/hooks.py. */
  protectedIds: string[];
}

export interface FuzzBounds {
  /** Test cases per operation and phase. */
  maxExamples: number;
  seed: number;
  workers: number;
  /** The run is stopped, and counted as failed, after this long. */
  killAfterMs: number;
}

export interface FuzzFailure {
  code: string;
  title: string;
  operation: string;
  detail: string;
  request: string;
  response: string;
}

export interface FuzzResult {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  seconds: number;
  requests: number;
  operations: { total: number; tested: number };
  testCases: number;
  failures: FuzzFailure[];
  errors: string[];
  warnings: string[];
  reportDir: string;
}

export async function runContractFuzz(schemathesis: string, target: FuzzTarget, bounds: FuzzBounds): Promise<FuzzResult> {
  const reportDir = await mkdtemp(path.join(os.tmpdir(), 'svc-fuzz-'));
  const args = [
    '--config-file',
    path.join(HERE, 'fuzz', 'schemathesis.toml'),
    '--no-color',
    'run',
    `${target.url}/openapi.json`,
    '--checks',
    'all',
    '--max-examples',
    String(bounds.maxExamples),
    '--seed',
    String(bounds.seed),
    '--workers',
    String(bounds.workers),
    '--request-timeout',
    '30',
    '--report',
    'json,ndjson',
    '--report-dir',
    reportDir,
  ];
  const env = {
    ...process.env,
    FUZZ_HOOKS: path.join(HERE, 'fuzz', 'hooks.py'),
    FUZZ_API_KEY: target.apiKey,
    FUZZ_ORGANIZATION: target.organizationId,
    FUZZ_DATASET: target.datasetId,
    FUZZ_PROTECTED_IDS: target.protectedIds.join(','),
    // Hypothesis keeps an example database in the working directory unless told otherwise.
    HYPOTHESIS_STORAGE_DIRECTORY: path.join(reportDir, '.hypothesis'),
  };
  const started = Date.now();
  const output = fs.createWriteStream(path.join(reportDir, 'output.txt'));
  const { exitCode, timedOut } = await new Promise<{ exitCode: number | null; timedOut: boolean }>((resolve, reject) => {
    const child = spawn(schemathesis, args, { env, cwd: reportDir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(output);
    child.stderr.pipe(output);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
    }, bounds.killAfterMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, timedOut });
    });
  });
  output.end();
  return { ...readReports(reportDir), command: `schemathesis ${args.join(' ')}`, exitCode, timedOut, seconds: (Date.now() - started) / 1000, reportDir };
}

type Json = Record<string, any>;

function parsedOrNull(text: string): Json | null {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function readReports(dir: string): Pick<FuzzResult, 'requests' | 'operations' | 'testCases' | 'failures' | 'errors' | 'warnings'> {
  const files = fs.readdirSync(dir);
  const jsonFile = files.find((f) => f.startsWith('json-'));
  const ndjsonFile = files.find((f) => f.startsWith('ndjson-'));
  // A run stopped at its time limit may leave the report cut short: then the timeout is what is told.
  const report: Json = jsonFile ? (parsedOrNull(fs.readFileSync(path.join(dir, jsonFile), 'utf8')) ?? {}) : {};
  let requests = 0;
  const failures: FuzzFailure[] = [];
  const errors: string[] = [];
  const lines = ndjsonFile ? fs.readFileSync(path.join(dir, ndjsonFile), 'utf8').split('\n').filter(Boolean) : [];
  for (const line of lines) {
    const event = parsedOrNull(line);
    if (!event) continue;
    const finished = event.ScenarioFinished;
    if (event.NonFatalError)
      errors.push(`${event.NonFatalError.label ?? ''}: ${event.NonFatalError.info?.message ?? JSON.stringify(event.NonFatalError).slice(0, 500)}`);
    if (!finished) continue;
    const recorder: Json = finished.recorder ?? {};
    requests += Object.keys(recorder.interactions ?? {}).length;
    for (const [caseId, checks] of Object.entries<Json[]>(recorder.checks ?? {})) {
      for (const check of checks) {
        if (check.status !== 'failure') continue;
        const failure: Json = check.failure_info?.failure ?? {};
        const request: Json = recorder.cases?.[caseId]?.value ?? {};
        const interaction: Json | undefined = recorder.interactions?.[caseId];
        failures.push({
          code: failure.code ?? check.name,
          title: failure.title ?? check.name,
          operation: failure.operation ?? recorder.label,
          detail: failure.message ?? '',
          request: describeRequest(request),
          response: interaction ? describeResponse(interaction.response) : '(no response)',
        });
      }
    }
  }
  const warnings = Object.entries<unknown[]>(report.warnings ?? {})
    .filter(([, items]) => Array.isArray(items) && items.length > 0)
    .map(([name, items]) => `${name}: ${items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('; ')}`);
  for (const error of report.errors ?? []) errors.push(`${error.title}: ${JSON.stringify(error).slice(0, 500)}`);
  return {
    requests,
    operations: { total: report.operations?.selected ?? 0, tested: report.operations?.tested ?? 0 },
    testCases: report.test_cases?.generated ?? 0,
    failures: unique(failures),
    errors: [...new Set(errors)],
    warnings,
  };
}

/** One entry per kind of failure of an operation with the same answer: the first request that showed it. */
function unique(failures: FuzzFailure[]): FuzzFailure[] {
  const seen = new Map<string, FuzzFailure>();
  for (const f of failures) {
    const key = `${f.code} ${f.operation} ${f.response.slice(0, 120)}`;
    if (!seen.has(key)) seen.set(key, f);
  }
  return [...seen.values()];
}

function describeRequest(value: Json): string {
  const query = value.query && Object.keys(value.query).length ? `?${new URLSearchParams(value.query).toString()}` : '';
  const pathParams: Json = value.path_parameters ?? {};
  const url = String(value.path ?? '').replace(/\{([^}]+)\}/g, (_m, name) => encodeURIComponent(String(pathParams[name] ?? `{${name}}`)));
  const body = value.body === undefined ? '' : ` ${truncate(JSON.stringify(value.body), 400)}`;
  return `${value.method} ${url}${query}${body}`;
}

function describeResponse(response: Json | null | undefined): string {
  if (!response) return '(no response)';
  const content = response.content?.$base64 ? Buffer.from(response.content.$base64, 'base64').toString('utf8') : '';
  return `${response.status_code} ${truncate(content, 300)}`;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

/** The run in a few lines: the figures, then each failure with its request and answer. */
export function describeFuzz(result: FuzzResult): string {
  const byCode = new Map<string, number>();
  for (const f of result.failures) byCode.set(`${f.code} ${f.title}`, (byCode.get(`${f.code} ${f.title}`) ?? 0) + 1);
  const lines = [
    `schemathesis: ${result.requests} requests, ${result.testCases} test cases, ${result.operations.tested}/${result.operations.total} operations, ${result.seconds.toFixed(0)} s, exit ${result.exitCode}${result.timedOut ? ' (stopped: over its time)' : ''}`,
    `failures: ${result.failures.length === 0 ? 'none' : [...byCode].map(([kind, n]) => `${kind}: ${n}`).join(', ')}`,
    ...result.failures.map((f) => `- ${f.code} ${f.operation}: ${f.detail.replace(/\s+/g, ' ')}\n    ${f.request}\n    -> ${f.response}`),
    ...result.errors.map((e) => `error: ${e}`),
    ...result.warnings.map((w) => `warning: ${truncate(w, 600)}`),
    `reports and output: ${result.reportDir}`,
  ];
  return lines.join('\n');
}
