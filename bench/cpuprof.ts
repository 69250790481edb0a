// `--cpu-profile`: a V8 CPU profile of each measured phase, taken in-process through the inspector,
// written to bench/results/prof/<suite>-<mode>-<phase>.cpuprofile. Summarise with bench/profile.ts,
// or open in Chrome DevTools (Performance › Load profile).
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { RESULTS_DIR } from './report.js';

export const PROFILE_DIR = path.join(RESULTS_DIR, 'prof');

export class PhaseProfiler {
  private session: Session | null = null;

  constructor(private readonly prefix: string) {}

  async start(): Promise<void> {
    if (!this.session) {
      this.session = new Session();
      this.session.connect();
      await this.session.post('Profiler.enable');
      await this.session.post('Profiler.setSamplingInterval', { interval: 500 });
    }
    await this.session.post('Profiler.start');
  }

  /** Stops the running profile and writes it; returns the file. */
  async stop(phase: string): Promise<string> {
    const { profile } = await this.session!.post('Profiler.stop');
    await mkdir(PROFILE_DIR, { recursive: true });
    const file = path.join(PROFILE_DIR, `${this.prefix}-${phase}.cpuprofile`);
    await writeFile(file, JSON.stringify(profile));
    return file;
  }

  close(): void {
    this.session?.disconnect();
    this.session = null;
  }
}
