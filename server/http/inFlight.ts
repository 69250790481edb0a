// The requests the service is answering at this moment. Work that may run on the service's thread or
// on another (highlighting) asks it: while no other request is in flight, nothing waits for this
// thread, and handing work elsewhere would only add latency.
import type { ServerResponse } from 'node:http';

export class InFlight {
  private active = 0;

  /** Counts the request until its response has been sent or its connection has closed. */
  track(res: ServerResponse): void {
    this.active++;
    res.once('close', () => this.active--);
  }

  get count(): number {
    return this.active;
  }
}
