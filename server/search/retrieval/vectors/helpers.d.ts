// Types of helpers.js (plain JavaScript, loaded by the vectors' worker).
export interface ScanHelper {
  /** Let go: it failed or did not answer in time. */
  readonly broken: boolean;
  /** Scans it joined and answered. */
  readonly answered: number;
}
/** `count` helpers (started when first asked for); none once one was let go. */
export function scanHelpers(count: number): ScanHelper[];
