// The service's metrics, in Prometheus' registry (prom-client). Counters and timings are the
// process's, recorded where the work happens; states (engines up, work open) are read when the
// metrics are.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

// From a cached lookup to a page over a million chunks, and the slow tail of uploads and RAG.
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequests = new Counter({
  name: 'svc_http_requests_total',
  help: 'HTTP requests answered, by operation id, method and status',
  labelNames: ['operation', 'method', 'status'] as const,
  registers: [metricsRegistry],
});

export const httpDuration = new Histogram({
  name: 'svc_http_request_duration_seconds',
  help: 'Time from a request to the end of its answer, by operation id and status',
  labelNames: ['operation', 'status'] as const,
  buckets: SECONDS,
  registers: [metricsRegistry],
});

export const searchDuration = new Histogram({
  name: 'svc_search_duration_seconds',
  help: 'Time from a search request to its ranked, highlighted page, by search type',
  labelNames: ['search_type'] as const,
  buckets: SECONDS,
  registers: [metricsRegistry],
});

export const datasetEvents = new Counter({
  name: 'svc_dataset_events_total',
  help: 'Dataset events recorded, by type (among them the outcomes of file ingestion and crawls)',
  labelNames: ['event_type'] as const,
  registers: [metricsRegistry],
});

export const workflowsOpen = new Gauge({
  name: 'svc_workflows_open',
  help: 'Durable work started and not finished, by workflow',
  labelNames: ['workflow'] as const,
  registers: [metricsRegistry],
});

export const engineUp = new Gauge({
  name: 'svc_engine_up',
  help: '1 when the engine answered as the metrics were read, 0 when it did not',
  labelNames: ['engine', 'kind'] as const,
  registers: [metricsRegistry],
});
