// Threads that join a scan of the codes by column (columns.js) while the vectors' worker makes it:
// at a million vectors a scan is milliseconds of one core while the machine's others wait. The scan
// is cut into pieces that each thread claims in turn from one shared counter (scanPieces), so a
// helper that starts late, or is kept off its core by other work, takes fewer pieces and the worker
// never waits for a piece nobody began. A helper runs the same SIMD loop over the same shared memory
// (codeMemory.js, handed to it when it starts) and allocates none of it.
//
// A scan offered to a helper is open until the helper joins it or the worker, done with every
// piece, closes it; one compare-and-swap on a word they share decides which came first. The worker
// waits (Atomics.wait) only for a helper that joined: the scan stays one synchronous step of the
// worker, so no change to a set (nor its memory handed back) can come between a scan's start and
// its end. A helper that joined and has not answered in PATIENCE_MS, or failed, is let go: the
// worker makes the scan again alone, and scans alone from then on. Plain JavaScript, loaded by the
// vectors' worker.
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { memory } from './codeMemory.js';

/** How long the worker waits for a helper that joined a scan: far beyond any scan's milliseconds. */
export const PATIENCE_MS = 5000;

/** A scan's phase, in the low bits of the word a helper and the worker share (its ticket above). */
const OPEN = 0;
const JOINED = 1;
const ANSWERED = 2;
const CLOSED = 3;
const TICKETS = 2 ** 28;

/** A helper's answer to a scan it did not join. */
export const NOT_JOINED = Object.freeze({ slots: [], scores: [] });

/** Claims the pieces of `scan` ({ next: the shared counter, pieces }) one by one until none is left, calling `each(piece)`. */
export function scanPieces({ next, pieces }, each) {
  for (let piece = Atomics.add(next, 0, 1); piece < pieces; piece = Atomics.add(next, 0, 1)) each(piece);
}

class Helper {
  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    /** The scan offered last: ticket * 4 + its phase. */
    this.state = new Int32Array(new SharedArrayBuffer(4));
    this.ticket = 0;
    this.broken = false;
    /** Scans it joined and answered. */
    this.answered = 0;
    this.thread = new Worker(new URL('./scanHelper.js', import.meta.url), {
      workerData: { codeMemory: memory, port: port2, state: this.state },
      transferList: [port2],
    });
    // Nothing it does has to be finished for the worker to end.
    this.thread.unref();
    this.thread.on('error', () => this.stop());
  }

  /** Offers it a scan to join: { layout, plan, next, pieces, piece, to, n, scratch, handoff } (see columns.js). */
  offer(scan) {
    this.ticket = (this.ticket + 1) % TICKETS;
    Atomics.store(this.state, 0, this.ticket * 4 + OPEN);
    this.port.postMessage({ ...scan, ticket: this.ticket });
  }

  /**
   * Its best of the pieces it claimed ({ slots, scores }); NOT_JOINED when it did not join the
   * scan before the worker closed it; null when it joined and failed or did not answer in time (it is
   * then let go).
   */
  answer() {
    const base = this.ticket * 4;
    if (Atomics.compareExchange(this.state, 0, base + OPEN, base + CLOSED) === base + OPEN) return NOT_JOINED;
    if (Atomics.wait(this.state, 0, base + JOINED, PATIENCE_MS) === 'timed-out') {
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

/** Joins the scan of `ticket` (true), unless the worker closed it first (false). Called by a helper. */
export function join(state, ticket) {
  return Atomics.compareExchange(state, 0, ticket * 4 + OPEN, ticket * 4 + JOINED) === ticket * 4 + OPEN;
}

/** Tells the worker that the answer to the scan of `ticket` was posted. Called by a helper. */
export function answered(state, ticket) {
  Atomics.store(state, 0, ticket * 4 + ANSWERED);
  Atomics.notify(state, 0);
}

const helpers = [];

/** `count` helpers (started when first asked for); none once one was let go. */
export function scanHelpers(count) {
  if (helpers.some((helper) => helper.broken)) return [];
  while (helpers.length < count) helpers.push(new Helper());
  return helpers.slice(0, Math.max(count, 0));
}
