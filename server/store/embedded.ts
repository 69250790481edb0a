// The embedded database (PGlite) on a worker thread (pgliteWorker.js), reached by node-postgres
// through in-process streams that stand in for sockets: each stream frames what the driver writes
// into units (messages up to a Sync or a simple Query) and posts them to the worker, which runs them
// in turn and posts back the server's bytes. Several connections keep the worker busy: one's query
// waits there, not in the pool, while the service's thread handles another's answer. They share
// PGlite's one session, so their prepared statements' names are kept apart (sessionStatements.ts).
import { Duplex } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { SessionStatements } from './sessionStatements.js';

/** Connections to the embedded database: enough that a query is always waiting in the worker. */
export const EMBEDDED_CONNECTIONS = 4;

export interface EmbeddedDatabase {
  /** node-postgres settings: the connection's stream is a new in-process stream to the worker. */
  connection: { user: string; database: string; stream: () => Duplex };
  close(): Promise<void>;
}

type FromWorker = { ready: true } | { failed: string } | { closed: true } | { connection: number; bytes: Uint8Array } | { connection: number; failed: string };

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'

/** One client connection: what the driver writes goes to the worker in units, answers come back as data. */
class WorkerStream extends Duplex {
  private pending: Buffer = Buffer.alloc(0);
  private unitStart = 0;
  private started = false;
  private readonly statements: SessionStatements;

  constructor(
    private readonly worker: Worker,
    readonly id: number,
    private readonly forget: (id: number, closing: Uint8Array<ArrayBuffer> | null) => void,
  ) {
    super();
    this.statements = new SessionStatements(id);
  }

  /** The driver "connects" as to a socket. */
  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  receive(bytes: Uint8Array): void {
    this.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  _read(): void {}

  _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = this.unitStart;
    while (this.pending.length - at >= 5) {
      // The startup message has no type byte: its length comes first.
      const typed = this.started;
      const length = typed ? 1 + this.pending.readInt32BE(at + 1) : this.pending.readInt32BE(at);
      if (this.pending.length - at < length) break;
      const type = typed ? this.pending[at] : null;
      at += length;
      // The driver ends the stream after its Terminate; the worker hears of it then.
      if (type === TERMINATE) {
        this.unitStart = at;
        continue;
      }
      if (!typed || type === SYNC || type === QUERY) {
        this.started = true;
        const bytes = this.pending.subarray(this.unitStart, at);
        // A copy with a buffer of its own, handed over to the worker.
        const unit = new Uint8Array(typed ? this.statements.rename(bytes) : bytes);
        this.worker.postMessage({ connection: this.id, bytes: unit }, [unit.buffer]);
        this.unitStart = at;
      }
    }
    // A partial unit is kept as a copy: the driver may reuse what it wrote once written.
    this.pending = this.unitStart < this.pending.length ? Buffer.from(this.pending.subarray(this.unitStart)) : Buffer.alloc(0);
    this.unitStart = 0;
    done();
  }

  /** A query's messages, written corked, framed at once. */
  _writev(chunks: { chunk: Buffer }[], done: (error?: Error | null) => void): void {
    this._write(Buffer.concat(chunks.map(({ chunk }) => chunk)), 'binary', done);
  }

  _final(done: () => void): void {
    this.push(null);
    done();
  }

  /** Every end of a stream comes here (an ended stream destroys itself): the worker hears of it. */
  _destroy(error: Error | null, done: (error: Error | null) => void): void {
    const closing = this.statements.closing();
    this.forget(this.id, closing && new Uint8Array(closing));
    done(error);
  }
}

/** Starts PGlite on `dataDir` in a worker thread; resolves once it is open. */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const worker = new Worker(new URL('./pgliteWorker.js', import.meta.url), { workerData: { dataDir } });
  const streams = new Map<number, WorkerStream>();
  let lastId = 0;
  const next = (): Promise<FromWorker> =>
    new Promise((resolve, reject) => {
      const exited = (code: number) => reject(new Error(`the embedded database's thread exited with code ${code}`));
      const answered = (message: FromWorker) => {
        if ('connection' in message) return;
        worker.off('message', answered);
        worker.off('error', reject);
        worker.off('exit', exited);
        resolve(message);
      };
      worker.on('message', answered);
      worker.once('error', reject);
      worker.once('exit', exited);
    });
  worker.on('message', (message: FromWorker) => {
    if (!('connection' in message)) return;
    const stream = streams.get(message.connection);
    if (!stream) return;
    if ('bytes' in message) stream.receive(message.bytes);
    else stream.destroy(new Error(`the embedded database failed: ${message.failed}`));
  });
  // A thread that dies takes every connection with it; the driver sees them reset.
  worker.on('exit', () => {
    for (const stream of streams.values()) stream.destroy(Object.assign(new Error('the embedded database stopped'), { code: 'ECONNRESET' }));
  });
  const started = await next().catch((error: Error) => ({ failed: error.message }));
  if (!('ready' in started)) {
    await worker.terminate();
    throw new Error(`the embedded database did not start: ${'failed' in started ? started.failed : 'unexpected message'}`);
  }
  const forget = (id: number, closing: Uint8Array<ArrayBuffer> | null) => {
    if (streams.delete(id)) worker.postMessage({ ended: id, closing }, closing ? [closing.buffer] : []);
  };
  return {
    connection: {
      user: 'postgres',
      database: 'postgres',
      stream: () => {
        const stream = new WorkerStream(worker, ++lastId, forget);
        streams.set(stream.id, stream);
        return stream;
      },
    },
    close: async () => {
      const closed = next();
      worker.postMessage({ close: true });
      await closed.catch(() => {});
      await worker.terminate();
    },
  };
}
