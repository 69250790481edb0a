// `npm run bench`: runs benchmark suites on the embedded and/or the full engines, prints a table per
// suite and mode, and writes bench/results/<suite>-<mode>.json. See bench/README.md.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { installedModel, LOCAL_MODEL } from '../server/engines/embeddings/local/files.js';
import { DEFAULT_REPEATS, DEFAULT_SEARCHES, formatAnalytics, runAnalytics } from './analytics.js';
import { DEFAULT_CLUSTER_SEARCHES } from './analytics-clusters.js';
import { DEFAULT_RAG_RECORDS, formatRagAnalytics, runRagAnalytics } from './analytics-rag.js';
import { formatEmbeddings, runEmbeddings } from './embeddings.js';
import { formatFiles, runFiles } from './files.js';
import { formatFilesIngest, runFilesIngest } from './ingest-files.js';
import { formatIngest, runIngest, type IngestOptions } from './ingest.js';
import { DEFAULT_LOAD, formatLoad, runLoad } from './load.js';
import { type BenchEmbedder, MODES, openMode, type Mode, type ModeEnvironment } from './modes.js';
import { DEFAULT_CISI_DIR } from './cisi.js';
import { formatRag, runRag } from './rag.js';
import { formatCrawl, runCrawl } from './crawl.js';
import { formatRelevance, runRelevance, type RelevanceOptions } from './relevance.js';
import { RESULTS_DIR, writeResult } from './report.js';
import { DEFAULT_CHUNKS, formatSearch, runSearchBench, type SearchResult } from './search.js';
import { formatGrowth, growthOf } from './growth.js';

const USAGE = `usage: npm run bench -- [options]

  --suite <names>        suites to run, comma-separated (default: all): ingest, relevance, search, files, files-ingest, load, embeddings, rag, crawl, analytics
  --mode <names>         engines, comma-separated (default: embedded,full)
                           embedded  PGlite + Postgres full-text, in a temporary DATA_DIR
                           full      PostgreSQL + pgvector, Typesense, Temporal (npm run services' engines)
  --chunks <n>           corpus size (default 10000; search: 20000 embedded, 100000 full); search takes
                           several, comma-separated (100000,1000000): each measured in turn, then each
                           type's p50 at the largest over the smallest (growth.ts)
  --seed <n>             corpus seed (default 42)
  --embedder <name>      the datasets' embedder: local (the model) or builtin (hashing); default local,
                           but builtin for search, load, rag and analytics (the 100,000 chunks of search and load
                           take the model about 25 minutes to embed on two cores; rag measures the model's answer;
                           analytics embeds nothing)

  ingest:
  --batch <n>            chunks per API request, at most 120 (default 120)
  --raw-batch <n>        rows per bulk statement / import on the raw path (default 1000)
  --concurrency <list>   concurrent API requests, one run each (default 1,2)
  --warmup <n>           chunks written before measuring, not counted (default 480)
  --profile              timers around the service's seams: adds a per-request breakdown
                           (the timers cost a little: compare figures from runs without it)
  --cpu-profile          a V8 CPU profile of each measured phase (load: of the service), in bench/results/prof/
                           (summarise: npx tsx bench/profile.ts bench/results/prof/<file>)

  relevance:
  --cisi <dir>           the CISI collection: docs.jsonl, queries.jsonl, qrels.jsonl
                           (default ${DEFAULT_CISI_DIR})

  search:
  --queries <n>          measured queries per search type (default 200; rag: requests of each kind)
  --bulk                 load the corpus straight into the engines (bench/bulk.ts), not through
                           the API: for 1,000,000 chunks, which the API would take hours to load

  files:
  --file-mib <n>         size of the streamed multipart upload, in MiB (default 100)
  --pages <n>            crawl: pages of the local site crawled (default 500)

  files-ingest:
  --text-mib <n>         size of the text corpus, in MiB (default 8)
  --pdf-pages <n>        pages of the PDF corpus (default 200)

  analytics:
  --searches <n>         searches recorded in the dataset, written straight into the table (default ${DEFAULT_SEARCHES})
  --repeats <n>          requests per report and scenario (default ${DEFAULT_REPEATS})
  --cluster-searches <n> searches of the last 7 days in a dataset of their own, clustered into topics by one
                           run of the searchClusters workflow, timed; 0: none (default ${DEFAULT_CLUSTER_SEARCHES})
  --analytics <parts>    parts of the suite, comma-separated (default search,rag): search reports over
                           --searches searches, RAG reports over --rag-records RAG queries
  --rag-records <n>      RAG queries recorded in the RAG part's dataset (default ${DEFAULT_RAG_RECORDS})

  load:
  --clients <n>          concurrent keep-alive clients (default ${DEFAULT_LOAD.clients})
  --seconds <n>          how long they send requests (default ${DEFAULT_LOAD.seconds})
  --warmup-seconds <n>   the same clients before the clock starts, reported apart (default ${DEFAULT_LOAD.warmupSeconds})
  --write-share <x>      share of requests that write chunks (default ${DEFAULT_LOAD.writeShare})
  --idle-share <x>       share of requests after which a client goes quiet for 1-10 s (default ${DEFAULT_LOAD.idleShare})
  --pause-ms <n>         the longest pause between a client's requests, each drawn from 0 to it; 0: none,
                           which finds the service's ceiling (default ${DEFAULT_LOAD.pauseMs})
  (--chunks: chunks loaded before the clients start, default ${DEFAULT_LOAD.chunks})
  -h, --help`;

interface Suite {
  run(modeEnv: ModeEnvironment, log: (line: string) => void): Promise<{ json: Record<string, unknown>; text: string }>;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      suite: { type: 'string', default: 'all' },
      mode: { type: 'string', default: MODES.join(',') },
      chunks: { type: 'string' },
      embedder: { type: 'string' },
      queries: { type: 'string', default: '200' },
      bulk: { type: 'boolean', default: false },
      seed: { type: 'string', default: '42' },
      batch: { type: 'string', default: '120' },
      'raw-batch': { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '1,2' },
      warmup: { type: 'string', default: '480' },
      profile: { type: 'boolean', default: false },
      'cpu-profile': { type: 'boolean', default: false },
      cisi: { type: 'string', default: DEFAULT_CISI_DIR },
      'file-mib': { type: 'string', default: '100' },
      pages: { type: 'string', default: '500' },
      'text-mib': { type: 'string', default: '8' },
      'pdf-pages': { type: 'string', default: '200' },
      clients: { type: 'string', default: String(DEFAULT_LOAD.clients) },
      seconds: { type: 'string', default: String(DEFAULT_LOAD.seconds) },
      'warmup-seconds': { type: 'string', default: String(DEFAULT_LOAD.warmupSeconds) },
      'write-share': { type: 'string', default: String(DEFAULT_LOAD.writeShare) },
      'idle-share': { type: 'string', default: String(DEFAULT_LOAD.idleShare) },
      'pause-ms': { type: 'string', default: String(DEFAULT_LOAD.pauseMs) },
      searches: { type: 'string', default: String(DEFAULT_SEARCHES) },
      repeats: { type: 'string', default: String(DEFAULT_REPEATS) },
      'cluster-searches': { type: 'string', default: String(DEFAULT_CLUSTER_SEARCHES) },
      analytics: { type: 'string', default: 'search,rag' },
      'rag-records': { type: 'string', default: String(DEFAULT_RAG_RECORDS) },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const int = (name: string, text: string, min = 0) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name}: expected an integer ≥ ${min}, got ${text}`);
    return n;
  };
  const share = (name: string, text: string) => {
    const x = Number(text);
    if (!(x >= 0 && x <= 1)) throw new UsageError(`--${name}: expected a number from 0 to 1, got ${text}`);
    return x;
  };
  const list = (text: string) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);

  // A function: only the search suite takes several sizes, and another suite's reading of one
  // must not fail a run of search alone.
  const ingest = (): IngestOptions => ({
    chunks: int('chunks', values.chunks ?? '10000', 1),
    seed: int('seed', values.seed),
    batch: int('batch', values.batch, 1),
    rawBatch: int('raw-batch', values['raw-batch'], 1),
    concurrency: [...new Set(list(values.concurrency).map((c) => int('concurrency', c, 1)))],
    warmup: int('warmup', values.warmup),
    profile: values.profile,
    cpuProfile: values['cpu-profile'],
  });
  const relevance: RelevanceOptions = { cisiDir: values.cisi };
  const suites: Record<string, Suite> = {
    embeddings: {
      run: async (modeEnv, log) => {
        const result = await runEmbeddings(modeEnv, { seed: int('seed', values.seed) }, log);
        return { json: result as unknown as Record<string, unknown>, text: formatEmbeddings(modeEnv.mode, result) };
      },
    },
    ingest: {
      run: async (modeEnv, log) => {
        const result = await runIngest(modeEnv, ingest(), log);
        return { json: result as unknown as Record<string, unknown>, text: formatIngest(modeEnv.mode, result) };
      },
    },
    rag: {
      run: async (modeEnv, log) => {
        const result = await runRag(modeEnv, { requests: int('queries', values.queries, 1), seed: int('seed', values.seed) }, log);
        return { json: result as unknown as Record<string, unknown>, text: formatRag(modeEnv.mode, result) };
      },
    },
    crawl: {
      run: async (modeEnv, log) => {
        const result = await runCrawl(modeEnv, { pages: int('pages', values.pages, 1) }, log);
        return { json: result as unknown as Record<string, unknown>, text: formatCrawl(modeEnv.mode, result) };
      },
    },
    relevance: {
      run: async (modeEnv, log) => {
        const result = await runRelevance(modeEnv, relevance, log);
        return { json: result as unknown as Record<string, unknown>, text: formatRelevance(modeEnv.mode, result) };
      },
    },
    search: {
      run: async (modeEnv, log) => {
        const sizes = values.chunks === undefined ? [null] : [...new Set(list(values.chunks).map((c) => int('chunks', c, 1)))].sort((x, y) => x - y);
        if (sizes[0] === null) log(`--chunks not given: ${DEFAULT_CHUNKS[modeEnv.mode]} chunks in ${modeEnv.mode} mode`);
        const options = {
          seed: int('seed', values.seed),
          queries: int('queries', values.queries, 1),
          bulk: values.bulk === true,
          cpuProfile: values['cpu-profile'] === true,
        };
        const runs: { chunks: number; result: SearchResult }[] = [];
        for (const chunks of sizes) {
          const result = await runSearchBench(modeEnv, { ...options, chunks }, log);
          runs.push({ chunks: result.options.chunks, result });
        }
        if (runs.length === 1) return { json: runs[0].result as unknown as Record<string, unknown>, text: formatSearch(modeEnv.mode, runs[0].result) };
        const growth = growthOf(runs);
        return {
          json: { runs: runs.map((r) => r.result), growth } as unknown as Record<string, unknown>,
          text: [...runs.map((r) => formatSearch(modeEnv.mode, r.result)), formatGrowth(modeEnv.mode, growth)].join('\n\n'),
        };
      },
    },
    analytics: {
      run: async (modeEnv, log) => {
        const parts = list(values.analytics);
        for (const part of parts) if (part !== 'search' && part !== 'rag') throw new UsageError(`--analytics: unknown part ${part} (known: search, rag)`);
        const [repeats, seed] = [int('repeats', values.repeats, 1), int('seed', values.seed)];
        const json: Record<string, unknown> = {};
        const texts: string[] = [];
        if (parts.includes('search')) {
          const options = {
            searches: int('searches', values.searches, 1),
            repeats,
            clusterSearches: int('cluster-searches', values['cluster-searches'], 0),
            seed,
          };
          const result = await runAnalytics(modeEnv, options, log);
          Object.assign(json, result);
          texts.push(formatAnalytics(modeEnv.mode, result));
        }
        if (parts.includes('rag')) {
          const result = await runRagAnalytics(modeEnv, { records: int('rag-records', values['rag-records'], 1), repeats, seed }, (line) =>
            log(`rag: ${line}`),
          );
          json.rag = result;
          texts.push(formatRagAnalytics(modeEnv.mode, result));
        }
        return { json, text: texts.join('\n\n') };
      },
    },
    files: {
      run: async (modeEnv, log) => {
        const result = await runFiles(modeEnv, { sizeMib: int('file-mib', values['file-mib'], 1) }, log);
        return { json: result as unknown as Record<string, unknown>, text: formatFiles(modeEnv.mode, result) };
      },
    },
    'files-ingest': {
      run: async (modeEnv, log) => {
        const options = { textMib: int('text-mib', values['text-mib'], 1), pdfPages: int('pdf-pages', values['pdf-pages'], 1), seed: int('seed', values.seed) };
        const result = await runFilesIngest(modeEnv, options, log);
        return { json: result as unknown as Record<string, unknown>, text: formatFilesIngest(modeEnv.mode, result) };
      },
    },
    load: {
      run: async (modeEnv, log) => {
        const options = {
          clients: int('clients', values.clients, 1),
          seconds: int('seconds', values.seconds, 1),
          warmupSeconds: int('warmup-seconds', values['warmup-seconds'], 0),
          chunks: int('chunks', values.chunks ?? String(DEFAULT_LOAD.chunks), 1),
          writeShare: share('write-share', values['write-share']),
          idleShare: share('idle-share', values['idle-share']),
          pauseMs: int('pause-ms', values['pause-ms'], 0),
          timeoutMs: DEFAULT_LOAD.timeoutMs,
          seed: int('seed', values.seed),
          cpuProfile: values['cpu-profile'] ? path.join(RESULTS_DIR, 'prof', `load-${modeEnv.mode}`) : undefined,
        };
        const result = await runLoad(modeEnv, options, log);
        const text = formatLoad(modeEnv.mode, result);
        if (result.warmup.errors > 0 || Object.values(result.errors).some((n) => n > 0)) {
          // The figures are kept for a look, and the run fails: under load no request may fail.
          const file = await writeResult('load', `${modeEnv.mode}-failed`, result as unknown as Record<string, unknown>);
          throw new Error(`${text}\n→ ${file}\nthe load run had errors`);
        }
        return { json: result as unknown as Record<string, unknown>, text };
      },
    },
  };

  const embedderOption = values.embedder;
  if (embedderOption !== undefined && embedderOption !== 'local' && embedderOption !== 'builtin') {
    throw new UsageError(`--embedder: expected local or builtin, got ${embedderOption}`);
  }
  const suiteEmbedder = (suite: string): BenchEmbedder => embedderOption ?? (['search', 'load', 'rag', 'analytics'].includes(suite) ? 'builtin' : 'local');
  const suiteNames = values.suite === 'all' ? Object.keys(suites) : list(values.suite);
  for (const s of suiteNames) if (!suites[s]) throw new UsageError(`--suite: unknown suite ${s} (known: ${Object.keys(suites).join(', ')})`);
  const modes = list(values.mode) as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new UsageError(`--mode: unknown mode ${m} (known: ${MODES.join(', ')})`);

  if (modes.length > 1) {
    // One process per mode, so that memory figures (and heap state) of one mode never carry into the other.
    let code = 0;
    for (const mode of modes) {
      const args = process.argv.slice(2).filter((a, i, all) => a !== '--mode' && all[i - 1] !== '--mode' && !a.startsWith('--mode='));
      const child = spawn(process.execPath, [...process.execArgv, process.argv[1], ...args, '--mode', mode], { stdio: 'inherit' });
      const [status] = (await once(child, 'exit')) as [number | null];
      if (status !== 0) code = status ?? 1;
    }
    return code;
  }

  let failed = false;
  for (const mode of modes) {
    const log = (line: string) => console.error(`[${mode}] ${line}`);
    const modeEnv = await openMode(mode, log);
    if (modeEnv.enginesStartSeconds !== null) log(`engines ready in ${modeEnv.enginesStartSeconds.toFixed(1)} s`);
    try {
      for (const name of suiteNames) {
        const t0 = performance.now();
        try {
          const embedder = suiteEmbedder(name);
          log(`${name}: datasets embedded by ${embedder === 'local' ? LOCAL_MODEL.name : 'the builtin hashing embedder'}`);
          const { json, text } = await suites[name].run(withEmbedder(modeEnv, embedder), (line) => log(`${name}: ${line}`));
          // Instrumented runs go to a file of their own: their figures are not the reported ones.
          const file = await writeResult(name, values.profile || values['cpu-profile'] ? `${mode}-profiled` : mode, {
            ...json,
            embedder,
            // The installed file, since the installer quantizes the model again on each machine.
            model: embedder === 'local' ? installedModel() : null,
            duration_s: Math.round((performance.now() - t0) / 100) / 10,
          });
          console.log(`\n${text}\n→ ${file} (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
        } catch (error) {
          failed = true;
          console.error(`\n[${mode}] ${name} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        }
      }
    } finally {
      await modeEnv.close();
    }
  }
  return failed ? 1 : 0;
}

class UsageError extends Error {}

/** The mode's engines, each service start's datasets embedded by `embedder` unless a suite says otherwise. */
function withEmbedder(modeEnv: ModeEnvironment, embedder: BenchEmbedder): ModeEnvironment {
  return { ...modeEnv, freshEnv: (choice = embedder) => modeEnv.freshEnv(choice) };
}

main().then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(error as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
