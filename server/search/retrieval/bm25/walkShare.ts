// The helper thread's side of a split BM25 walk (walkHelpers.ts): walks the range of ordinals it
// is handed over the index's shared arrays, posts its page back and marks it done.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { PostingList } from './postingList.js';
import { topK } from './topK.js';
import type { WalkShare } from './walkHelpers.js';

const { port, done } = workerData as { port: MessagePort; done: Int32Array };

port.on('message', ({ lists, range, ...walk }: WalkShare) => {
  try {
    const ranked = topK({ ...walk, lists: lists.map((state) => state && PostingList.from(state)) }, range);
    port.postMessage({ ranked });
  } catch (error) {
    port.postMessage({ error: String(error) });
  } finally {
    Atomics.store(done, 0, 1);
    Atomics.notify(done, 0);
  }
});
parentPort?.postMessage('ready');
