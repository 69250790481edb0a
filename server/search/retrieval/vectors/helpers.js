// Threads that take a share of a scan of the codes by column (columns.js) while the vectors' worker
// scans the rest: at a million vectors a scan is milliseconds of one core while the machine's others
// wait. A helper runs the same SIMD loop over the same shared memory (codeMemory.js, handed to it
// when it starts) and allocates none of it. The worker waits for a helper's answer with
// Atomics.wait: the scan stays one synchronous step of the worker, so no change to a set (nor its
// memory handed back) can come between a share's start and its answer. A helper that has not
// answered in PATIENCE_MS, or failed, is let go: the worker scans its share itself, and scans alone
// from then on. Plain JavaScript, loaded by the vectors' worker.
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { memory } from './codeMemory.js';

/** How long the worker waits for a helper's share: far beyond any scan's milliseconds. */
const PATIENCE_MS = 5000;

class Helper {
  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    /** 0 while a share is being scanned, 1 once its answer was posted. */
    this.done = new Int32Array(new SharedArrayBuffer(4));
    this.broken = false;
    /** Shares it answered. */
    this.answered = 0;
    this.thread = new Worker(new URL('./scanHelper.js', import.meta.url), {
      workerData: { codeMemory: memory, port: port2, done: this.done },
      transferList: [port2],
    });
    // Nothing it does has to be finished for the worker to end.
    this.thread.unref();
    this.thread.on('error', () => this.stop());
  }

  /** Hands it a share: { layout, query, from, to, n, scratch } (see scanShare). */
  start(share) {
    Atomics.store(this.done, 0, 0);
    this.port.postMessage(share);
  }

  /** Its best for the share it was handed ({ slots, scores }), or null when none came in time (it is then let go). */
  answer() {
    if (Atomics.wait(this.done, 0, 0, PATIENCE_MS) === 'timed-out') {
      this.stop();
      return null;
    }
    const answer = receiveMessageOnPort(this.port)?.message;
    if (!answer?.slots) {
      this.stop();
      return null;
    }
    this.answered++;
    return answer;
  }

  stop() {
    this.broken = true;
    this.thread.terminate().catch(() => undefined);
  }
}

const helpers = [];

/** `count` helpers (started when first asked for); none once one was let go. */
export function scanHelpers(count) {
  if (helpers.some((helper) => helper.broken)) return [];
  while (helpers.length < count) helpers.push(new Helper());
  return helpers.slice(0, Math.max(count, 0));
}
