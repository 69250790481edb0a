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

const { modelPath, tokenizerPath, maxTokens, threads } = workerData;
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

  /** The texts' vectors, one after another in one array. */
  async function embed(texts) {
    const encoded = texts.map((text) => tokenize(tokenizer, text));
    const width = Math.max(...encoded.map((ids) => ids.length));
    const count = texts.length;
    const ids = new BigInt64Array(count * width);
    const mask = new BigInt64Array(count * width);
    encoded.forEach((tokens, row) => {
      for (let i = 0; i < tokens.length; i++) {
        ids[row * width + i] = BigInt(tokens[i]);
        mask[row * width + i] = 1n;
      }
    });
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, [count, width]),
      attention_mask: new ort.Tensor('int64', mask, [count, width]),
    };
    if (withTokenTypes) feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(count * width), [count, width]);
    const results = await session.run(feeds);
    const hidden = results[output];
    const size = hidden.dims[2];
    const states = hidden.data;
    const vectors = new Float32Array(count * size);
    for (let row = 0; row < count; row++) {
      const vector = vectors.subarray(row * size, (row + 1) * size);
      const tokens = encoded[row].length;
      for (let t = 0; t < tokens; t++) {
        const at = (row * width + t) * size;
        for (let d = 0; d < size; d++) vector[d] += states[at + d];
      }
      // Mean pooling and L2 normalization: the norm of the sum is the norm of the mean, times tokens.
      let norm = 0;
      for (let d = 0; d < size; d++) norm += vector[d] * vector[d];
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < size; d++) vector[d] /= norm;
    }
    for (const tensor of Object.values(results)) tensor.dispose?.();
    return { vectors, size };
  }

  parentPort.on('message', async ({ id, texts }) => {
    try {
      const { vectors, size } = await embed(texts);
      parentPort.postMessage({ id, vectors, size }, [vectors.buffer]);
    } catch (error) {
      parentPort.postMessage({ id, failed: error instanceof Error ? error.message : String(error) });
    }
  });
  parentPort.postMessage({ ready: true });
}

start().catch((error) => parentPort.postMessage({ failed: error instanceof Error ? error.message : String(error) }));
