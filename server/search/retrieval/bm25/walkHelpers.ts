// A long BM25 walk split in two: a helper thread walks the chunks of the upper ordinals while this
// thread walks the lower, and the two pages are merged. A range's page holds every chunk of the
// range that is on the whole page, so the merge is the page a single walk gives, to the last bit.
// At a million chunks a query's walk is milliseconds of one core while the other waits.
//
// The helper reads the index's arrays in place (they lie in shared memory: sharedArrays.ts), and
// this thread waits for its half with Atomics.wait: the walk stays one synchronous step, so no
// change to the index comes between the halves. A helper that has not answered in PATIENCE_MS,
// or failed, is let go: its half is walked here, and walks stay whole from then on.
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { allShared } from '../../sharedArrays.js';
import type { PostingList, PostingListState } from './postingList.js';
import { BestK, EVERY_ORDINAL, type OrdinalRange, type Ranked, topK, type Walk } from './topK.js';

/**
 * Postings in the longest list at and above which a walk is split: a walk over such a list takes
 * some 0.7 ms of a core here, against some 0.05 ms to hand half of it over. Mutable for tests.
 */
export const SPLIT = { postings: 250_000 };
/** How long this thread waits for the helper's half: far beyond any walk's milliseconds. */
const PATIENCE_MS = 5000;

/** What the helper walks (walkShare.ts): the lists' arrays and bounds, and the range of ordinals. */
export interface WalkShare extends Omit<Walk, 'lists'> {
  lists: (PostingListState | null)[];
  range: OrdinalRange;
}

class WalkHelper {
  private readonly port: MessagePort;
  /** 0 while a half is being walked, 1 once its answer was posted. */
  private readonly done = new Int32Array(new SharedArrayBuffer(4));
  private readonly thread: Worker;
  /** Set once it has loaded what it walks with; until then, walks stay whole. */
  ready = false;
  broken = false;
  /** Settles once it is ready or was let go. */
  readonly loaded: Promise<void>;
  /** Halves it answered. */
  answered = 0;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    // Its own loader (walkHelper.js registers tsx): none of this thread's flags.
    this.thread = new Worker(new URL('./walkHelper.js', import.meta.url), {
      workerData: { port: port2, done: this.done },
      transferList: [port2],
      execArgv: [],
    });
    // Nothing it does has to be finished for the service to end.
    this.thread.unref();
    this.loaded = new Promise((settle) => {
      this.thread.once('message', () => {
        this.ready = true;
        settle();
      });
      this.thread.on('error', () => {
        this.stop();
        settle();
      });
    });
  }

  start(share: WalkShare): void {
    Atomics.store(this.done, 0, 0);
    this.port.postMessage(share);
  }

  /** Its page for the half it was handed, or null when none came in time (it is then let go). */
  answer(): Ranked[] | null {
    if (Atomics.wait(this.done, 0, 0, PATIENCE_MS) === 'timed-out') {
      this.stop();
      return null;
    }
    const answer = receiveMessageOnPort(this.port)?.message as { ranked?: Ranked[] } | undefined;
    if (!answer?.ranked) {
      this.stop();
      return null;
    }
    this.answered++;
    return answer.ranked;
  }

  stop(): void {
    this.broken = true;
    this.thread.terminate().catch(() => undefined);
  }
}

let helper: WalkHelper | null = null;

/** The helper, started when first asked for. */
const startedHelper = (): WalkHelper => (helper ??= new WalkHelper());

/** The helper when it is ready; null until then and once it was let go. */
function readyHelper(): WalkHelper | null {
  const started = startedHelper();
  return started.ready && !started.broken ? started : null;
}

/** The helper once it is ready (started now if it was not), or null when it was let go. */
export async function walkHelper(): Promise<WalkHelper | null> {
  await startedHelper().loaded;
  return readyHelper();
}

/**
 * topK over every ordinal (see there). With `split`, a walk whose longest list holds at least
 * SPLIT.postings postings is shared with the helper thread: it walks the ordinals of that list's
 * second half.
 */
export function walkTop(walk: Walk, split: boolean): Ranked[] {
  const { lists, chunks, k } = walk;
  let longest: PostingList | null = null;
  for (const list of lists) if (list && list.size > (longest?.size ?? 0)) longest = list;
  const worth = split && k > 0 && longest !== null && longest.size >= SPLIT.postings;
  const shared = worth && allShared([chunks.idWords, chunks.skipped, chunks.lengths, ...lists.flatMap((l) => (l ? [l.ordinals, l.tfs, l.classes] : []))]);
  const helping = shared ? readyHelper() : null;
  if (!helping || !longest) return topK(walk);
  const middle = longest.ordinals[longest.size >> 1];
  const upper: OrdinalRange = { from: middle, to: EVERY_ORDINAL.to };
  helping.start({ ...walk, lists: lists.map((l) => l?.state ?? null), range: upper });
  const lower = topK(walk, { from: 0, to: middle });
  const helped = helping.answer() ?? topK(walk, upper);
  const best = new BestK(k, chunks.idWords);
  for (const { ordinal, score } of [...lower, ...helped]) best.offer(ordinal, score);
  return best.ranked();
}
