// A helper thread of the vectors' worker (helpers.js): scans the shares of the codes by column it
// is handed, in the memory the worker shares with it, and posts back the best of each. Plain
// JavaScript, loaded by Node itself.
import { workerData } from 'node:worker_threads';
import { Best } from './best.js';
import { scanShare } from './columns.js';

const { port, done } = workerData;

port.on('message', ({ layout, query, from, to, n, scratch }) => {
  try {
    const top = new Best(n);
    scanShare(layout, query, from, to, top, scratch);
    port.postMessage({ slots: top.slots(), scores: top.scores.subarray(0, top.size) });
  } catch (error) {
    port.postMessage({ error: String(error) });
  } finally {
    Atomics.store(done, 0, 1);
    Atomics.notify(done, 0);
  }
});
