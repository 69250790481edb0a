// How the analytics suite times a report: a few unmeasured requests, then `repeats` one at a time,
// in each scenario (the last 7 days, and every record).
import { percentile } from './report.js';

export type Scenario = 'week' | 'all';

export interface Timing {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

const WARMUP = 3;

/** The report's p50 / p99 / max in each scenario; `call` sends its `n`th request and answers its time. */
export async function timeReport(call: (scenario: Scenario, n: number) => Promise<{ ms: number }>, repeats: number): Promise<Record<Scenario, Timing>> {
  const timings = {} as Record<Scenario, Timing>;
  for (const scenario of ['week', 'all'] as const) {
    for (let n = 0; n < WARMUP; n++) await call(scenario, n);
    const times: number[] = [];
    for (let n = 0; n < repeats; n++) times.push((await call(scenario, n)).ms);
    timings[scenario] = { p50_ms: percentile(times, 50), p99_ms: percentile(times, 99), max_ms: Math.max(...times) };
  }
  return timings;
}
