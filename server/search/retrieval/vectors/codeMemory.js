// The memory the held vectors' codes live in, by row (rows.js) and by column (columns.js):
// that of a small WebAssembly module (codes.wat) whose SIMD loops do the codes' sums. One memory
// serves every set of the worker; it grows to 4 GiB at most, and what a released set gave back is
// handed to sets made later. The memory is shared: a helper thread (helpers.js) is handed it, runs
// the same loops over it, and allocates nothing. Plain JavaScript, loaded by the vectors' worker.
import fs from 'node:fs';
import { workerData } from 'node:worker_threads';
import createWabt from 'wabt';

export const memory = workerData?.codeMemory ?? new WebAssembly.Memory({ initial: 1, maximum: 65_536, shared: true });
const wabt = await createWabt();
const parsed = wabt.parseWat('codes.wat', fs.readFileSync(new URL('./codes.wat', import.meta.url), 'utf8'), { simd: true, threads: true });
const { instance } = await WebAssembly.instantiate(parsed.toBinary({}).buffer, { codes: { memory } });
parsed.destroy();
export const { above, nibblesAbove, products: rowProducts, rowsAbove } = instance.exports;

/** Bytes of a WebAssembly memory page. */
const PAGE = 65_536;

/** Free stretches of the memory by their size in bytes, for reuse by sets made later. */
const freed = new Map();
/** The first byte of the memory not yet handed out. */
let top = 0;

/** `bytes` of the memory (zeroed), at an offset that is a multiple of 16; throws a RangeError when the memory cannot grow. */
export function allocate(bytes) {
  const size = Math.ceil(bytes / 16) * 16;
  const reused = freed.get(size)?.pop();
  if (reused !== undefined) {
    new Int8Array(memory.buffer, reused, size).fill(0);
    return reused;
  }
  const end = top + size;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / PAGE));
  const at = top;
  top = end;
  return at;
}

/** Hands back what `allocate(bytes)` gave at `at`. */
export function release(at, bytes) {
  const size = Math.ceil(bytes / 16) * 16;
  if (!freed.has(size)) freed.set(size, []);
  freed.get(size).push(at);
}
