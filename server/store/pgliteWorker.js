// The embedded database on a thread of its own. PGlite runs here and takes the PostgreSQL protocol
// of several client connections (embedded.ts), so the service's thread keeps serving HTTP, JSON and
// the in-memory indexes while a query runs, and queries queue here instead of waiting for the
// service's thread to send each one after the last answer.
//
// PGlite is one session. A unit (a connection's messages up to a Sync or a simple Query) runs
// whole, so extended-protocol steps never interleave; while a unit leaves a transaction open, only
// its connection's units run, until the transaction ends. Plain JavaScript: a worker is loaded by
// Node itself, without the TypeScript loader of the thread that starts it.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';

/** A simple-protocol ROLLBACK: ends the transaction of a connection that closed in it. */
const ROLLBACK = new Uint8Array([0x51, 0, 0, 0, 13, ...new TextEncoder().encode('ROLLBACK'), 0]);

/** Units not yet run, oldest first: { connection, bytes }. */
const queue = [];
/** The connection whose transaction is open, or null. */
let owner = null;
let running = false;
let db;

/** The transaction status of a ReadyForQuery ending `bytes` ('I' idle, 'T' in one, 'E' failed one), or null. */
function endStatus(bytes) {
  const n = bytes.length;
  if (n < 6 || bytes[n - 6] !== 0x5a || bytes[n - 5] !== 0 || bytes[n - 4] !== 0 || bytes[n - 3] !== 0 || bytes[n - 2] !== 5) return null;
  return String.fromCharCode(bytes[n - 1]);
}

async function run() {
  if (running) return;
  running = true;
  try {
    for (;;) {
      const next = owner === null ? 0 : queue.findIndex((unit) => unit.connection === owner);
      if (next < 0 || queue.length === 0) break;
      const [unit] = queue.splice(next, 1);
      let answer;
      try {
        answer = await db.execProtocolRaw(unit.bytes);
      } catch (error) {
        parentPort.postMessage({ connection: unit.connection, failed: error instanceof Error ? error.message : String(error) });
        continue;
      }
      // A copy of its own to hand over: the answer may be a view of PGlite's memory.
      answer = answer.slice();
      const status = endStatus(answer);
      // Without a ReadyForQuery the connection is between the steps of one query: still its turn.
      owner = status === 'I' ? null : unit.connection;
      parentPort.postMessage({ connection: unit.connection, bytes: answer }, [answer.buffer]);
    }
  } finally {
    running = false;
  }
}

/**
 * A connection closed: its waiting units go, a transaction it left open is rolled back, and the
 * statements it prepared are closed (`closing`, its Close messages, or null).
 */
async function closed(connection, closing) {
  for (let i = queue.length - 1; i >= 0; i--) if (queue[i].connection === connection) queue.splice(i, 1);
  if (closing) queue.push({ connection, bytes: closing });
  if (owner === connection) queue.unshift({ connection, bytes: ROLLBACK });
  await run();
}

try {
  db = await PGlite.create(workerData.dataDir, { extensions: { vector, pg_trgm } });
  parentPort.on('message', async (message) => {
    if (message.close) {
      await db.close();
      parentPort.postMessage({ closed: true });
    } else if (message.ended !== undefined) {
      await closed(message.ended, message.closing);
    } else {
      queue.push(message);
      await run();
    }
  });
  parentPort.postMessage({ ready: true });
} catch (error) {
  parentPort.postMessage({ failed: error instanceof Error ? error.message : String(error) });
}
