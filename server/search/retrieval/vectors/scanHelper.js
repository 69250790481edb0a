// A helper thread of the vectors' worker (helpers.js): joins the scans of the codes by column it is
// offered, unless the worker finished them first, claims their pieces in the memory the worker
// shares with it, and posts back the best of those it scanned. Plain JavaScript, loaded by Node.
import { workerData } from 'node:worker_threads';
import { Best } from './best.js';
import { scanPiece } from './columns.js';
import { awaitDelivery } from './handoff.js';
import { answered, join, PATIENCE_MS, scanPieces } from './helpers.js';

const { port, state } = workerData;

port.on('message', (scan) => {
  // A scan offered with a keyword list's hand-off is joined once the list is delivered (its walk
  // has let go of the other core); not when the worker closed it first.
  if (scan.handoff && !awaitDelivery(scan.handoff, PATIENCE_MS)) return;
  if (!join(state, scan.ticket)) return;
  try {
    const top = new Best(scan.n);
    scanPieces(scan, (piece) => scanPiece(scan, piece, top, scan.scratch));
    port.postMessage({ slots: top.slots(), scores: top.scores.subarray(0, top.size) });
  } catch (error) {
    port.postMessage({ error: String(error) });
  } finally {
    answered(state, scan.ticket);
  }
});
