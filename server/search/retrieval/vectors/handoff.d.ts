// Types of handoff.js (plain JavaScript, shared by the service's thread and the vectors' worker).
/** A hand-off with room for `capacity` ids: its memory, to be sent to the worker. */
export function handoff(capacity: number): Int32Array;
/** Delivers `ids` (their words): true when the worker will rank them, false when it has closed the hand-off, or they do not fit. */
export function deliver(words: Int32Array, ids: Int32Array): boolean;
/** Closes the hand-off (by the worker, once its candidates are found): the ids delivered before, or null. */
export function close(words: Int32Array): Int32Array | null;
/** Waits (a helper thread) until the list is delivered (true) or the hand-off closed, or `ms` pass (false). */
export function awaitDelivery(words: Int32Array, ms: number): boolean;
