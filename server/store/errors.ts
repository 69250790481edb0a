// What a failure of the database means for the caller. The database being down, starting or in
// recovery is the service being unavailable (503), never the caller's fault; a value the database
// refuses is bad input (400). Anything else stays an internal error.

interface DatabaseError {
  code?: string;
  message?: string;
}

/** Node's socket errors, and pg's words for a connection that died under a query. */
const CONNECTION_LOST = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
const CONNECTION_LOST_MESSAGES = [
  /Connection terminated/i,
  /Client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /Knex: Timeout acquiring a connection/i,
];

export function databaseFailure(error: unknown): { status: number; message: string } | undefined {
  const e = error as DatabaseError | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  // SQLSTATE class 57P (cannot connect now, shutdown, crash), 08 (connection), 53 (out of resources).
  if (/^(57P0[1-4]|08...|53...)$/.test(code) || CONNECTION_LOST.has(code) || CONNECTION_LOST_MESSAGES.some((re) => re.test(message))) {
    return { status: 503, message: `the database is unavailable (${unavailableReason(code, message)}); try again shortly` };
  }
  // Class 22 (data exception) and 54 (program limit, e.g. an index row too big): the input was refused.
  if (/^(22|54)...$/.test(code)) return { status: 400, message: `the database refused a value of the request: ${message}` };
  return undefined;
}

function unavailableReason(code: string, message: string): string {
  if (code === '57P03') return /recovery/i.test(message) ? 'it is in recovery' : 'it is starting up';
  if (code.startsWith('57P')) return 'it is shutting down';
  if (code.startsWith('53')) return 'it is out of resources';
  return 'no connection';
}
