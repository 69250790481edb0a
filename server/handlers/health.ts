import type { HealthCheckHandler } from '../../generated/handlers.js';
import { LOCAL_MODEL } from '../engines/embeddings/local/files.js';
import { localEmbedder } from '../engines/embeddings/local/index.js';
import { unavailable } from '../errors.js';

export const health_check: HealthCheckHandler = async ({ services }) => {
  const { store, lexical, workflows, defaultEmbedder } = services;
  const probes = [
    { name: `the database (${store.kind})`, ping: () => store.ping() },
    { name: `pgvector in the database (${store.kind})`, ping: () => store.checkVectors() },
    { name: `the lexical index (${lexical.kind})`, ping: () => lexical.ping() },
    { name: `the workflow engine (${workflows.kind})`, ping: () => workflows.ping() },
  ];
  if (defaultEmbedder === LOCAL_MODEL.name) {
    probes.push({ name: `the local embedding model (${LOCAL_MODEL.name})`, ping: async () => void (await localEmbedder().embed(['health'], 'document')) });
  }
  const results = await Promise.allSettled(probes.map((p) => withDeadline(p.ping(), 5000)));
  const failed = results.findIndex((r) => r.status === 'rejected');
  if (failed >= 0) {
    const reason = (results[failed] as PromiseRejectedResult).reason;
    throw unavailable(`${probes[failed].name} does not answer: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
  return { status: 200, body: { store: store.kind, lexical: lexical.kind, workflows: workflows.kind, embedder: defaultEmbedder } };
};

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
