// The local embedding model on a thread of its own, so that tokenizing and running it never hold
// up the service's thread. It takes a batch of texts and answers their vectors, one batch at a
// time: the service's side (index.ts) queues the batches and decides which runs next.
//
// The pipeline is sentence-transformers' for all-MiniLM-L6-v2: WordPiece tokens cut to the model's
// window, the transformer, mean pooling over the real tokens, L2 normalization. Plain JavaScript: a
// worker is loaded by Node itself, without the TypeScript loader of the thread that starts it.
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Tokenizer } from '@huggingface/tokenizers';
import ort from 'onnxruntime-node';

const { modelPath, tokenizerPath, maxTokens, dimension, threads } = workerData;
// A window of word pieces never needs more characters than this; longer texts are cut first so
// that a long chunk is not tokenized whole only to be truncated.
const MAX_CHARS = maxTokens * 24;

/** Token ids of each text, [CLS] … [SEP], at most maxTokens of them. */
function tokenize(tokenizer, text) {
  const ids = tokenizer.encode(text.slice(0, MAX_CHARS)).ids;
  if (ids.length <= maxTokens) return ids;
  return [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]];
}

async function start() {
  const tokenizer = new Tokenizer(JSON.parse(fs.readFileSync(tokenizerPath, 'utf8')), {});
  const session = await ort.InferenceSession.create(modelPath, {
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionProviders: ['cpu'],
  });
  const withTokenTypes = session.inputNames.includes('token_type_ids');
  const output = session.outputNames[0];

  /**
   * A text's vector, written into `vector`. One text a run: the quantized model scales each run's
   * activations by their range, so a text in a batch would get a vector that depends on the other
   * texts (and their padding). Alone, a text always gets the same vector; and nothing is padding.
   */
  async function embedOne(text, vector) {
    const tokens = tokenize(tokenizer, text);
    const shape = [1, tokens.length];
    const ids = BigInt64Array.from(tokens, (id) => BigInt(id));
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(tokens.length).fill(1n), shape),
    };
    if (withTokenTypes) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(tokens.length), shape);
    const results = await session.run(feeds);
    const states = results[output].data;
    const size = vector.length;
    for (let t = 0; t < tokens.length; t++) {
      for (let d = 0; d < size; d++) vector[d] += states[t * size + d];
    }
    // Mean pooling, then L2 normalization: the norm of the sum is the norm of the mean times the count.
    let norm = 0;
    for (let d = 0; d < size; d++) norm += vector[d] * vector[d];
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < size; d++) vector[d] /= norm;
    for (const tensor of Object.values(results)) tensor.dispose?.();
  }

  /** The texts' vectors, one after another in one array. */
  async function embed(texts) {
    const vectors = new Float32Array(texts.length * dimension);
    for (const [i, text] of texts.entries()) await embedOne(text, vectors.subarray(i * dimension, (i + 1) * dimension));
    return vectors;
  }

  parentPort.on('message', async ({ id, texts }) => {
    try {
      const vectors = await embed(texts);
      parentPort.postMessage({ id, vectors }, [vectors.buffer]);
    } catch (error) {
      parentPort.postMessage({ id, failed: error instanceof Error ? error.message : String(error) });
    }
  });
  parentPort.postMessage({ ready: true });
}

start().catch((error) => parentPort.postMessage({ failed: error instanceof Error ? error.message : String(error) }));
