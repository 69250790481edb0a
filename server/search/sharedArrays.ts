// Typed arrays over shared memory. The in-memory BM25 index keeps its arrays in them, so that a
// helper thread can walk part of a long search while this thread walks the rest
// (retrieval/bm25/walkHelpers.ts): handing such an array to a thread shares it, no copy made.

export type TypedArray = Int32Array | Uint16Array | Uint8Array;

export type TypedArrayKind<T extends TypedArray> = { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number };

/** `length` zeros of `Kind` over shared memory. */
export function sharedArray<T extends TypedArray>(Kind: TypedArrayKind<T>, length: number): T {
  return new Kind(new SharedArrayBuffer(length * Kind.BYTES_PER_ELEMENT));
}

/** `array` copied into a shared one of `size` (at least 2) elements. */
export function grown<T extends TypedArray>(array: T, size: number): T {
  const next = sharedArray(array.constructor as TypedArrayKind<T>, Math.max(size, 2));
  next.set(array);
  return next;
}

/** Whether every array lies in shared memory (so that a helper thread can read it in place). */
export function allShared(arrays: (TypedArray | null)[]): boolean {
  return arrays.every((array) => array === null || array.buffer instanceof SharedArrayBuffer);
}
