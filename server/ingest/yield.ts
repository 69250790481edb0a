// Lets timers and I/O run between long steps: PGlite answers queries synchronously inside the
// process, so a run of statements settles as one chain of promises and would otherwise keep
// HTTP requests (and everything else) waiting until a whole range of chunks is written.
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
