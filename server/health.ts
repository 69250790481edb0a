// Whether each engine behind the service answers: the health check and the metrics ask the same.
import { LOCAL_MODEL } from './engines/embeddings/local/files.js';
import { localEmbedder } from './engines/embeddings/local/index.js';
import type { Services } from './services.js';

export interface EngineProbe {
  /** The seam: store, vectors, lexical, workflows, embedder. */
  engine: string;
  /** The engine behind it. */
  kind: string;
  /** How the failure names it. */
  name: string;
  ping(): Promise<void>;
}

export function engineProbes(services: Services): EngineProbe[] {
  const { store, lexical, workflows, defaultEmbedder } = services;
  const probes: EngineProbe[] = [
    { engine: 'store', kind: store.kind, name: `the database (${store.kind})`, ping: () => store.ping() },
    { engine: 'vectors', kind: store.kind, name: `pgvector in the database (${store.kind})`, ping: () => store.checkVectors() },
    { engine: 'lexical', kind: lexical.kind, name: `the lexical index (${lexical.kind})`, ping: () => lexical.ping() },
    { engine: 'workflows', kind: workflows.kind, name: `the workflow engine (${workflows.kind})`, ping: () => workflows.ping() },
  ];
  if (defaultEmbedder === LOCAL_MODEL.name) {
    probes.push({
      engine: 'embedder',
      kind: LOCAL_MODEL.name,
      name: `the local embedding model (${LOCAL_MODEL.name})`,
      ping: async () => void (await localEmbedder().embed(['health'], 'document')),
    });
  }
  return probes;
}

/** Each probe's outcome, none waiting longer than `ms`. */
export function probeEngines(probes: EngineProbe[], ms = 5000): Promise<PromiseSettledResult<void>[]> {
  return Promise.allSettled(probes.map((p) => withDeadline(p.ping(), ms)));
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
