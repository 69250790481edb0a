// How long the test's own thread went without running a 5 ms timer while `work` ran: work done on
// another thread leaves it a few ms, work that holds this thread leaves it silent for all of it.

export async function longestStall(work: () => Promise<unknown>): Promise<{ took: number; longest: number }> {
  const started = performance.now();
  let longest = 0;
  let last = started;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(ticker);
  }
  return { took: performance.now() - started, longest };
}
