// Named prepared statements of several client connections in the one session PGlite is
// (embedded.ts). The driver names a statement once per connection and then only binds it, so the
// database parses and plans it once. Two connections naming the same statement would collide in one
// session: each connection's names get its own prefix on the way in, and are closed when it ends.
import { serialize } from 'pg-protocol';

const PARSE = 0x50; // 'P': name, query, parameter types
const BIND = 0x42; // 'B': portal, statement, …
const DESCRIBE = 0x44; // 'D': 'S' | 'P', name
const CLOSE = 0x43; // 'C': 'S' | 'P', name
const STATEMENT = 0x53; // 'S', in Describe and Close

/** Where the statement name of the message at `at` starts, or -1 when it names none. */
function statementNameAt(unit: Buffer, at: number): number {
  switch (unit[at]) {
    case PARSE:
      return at + 5;
    case BIND:
      return unit.indexOf(0, at + 5) + 1; // after the portal's name
    case DESCRIBE:
    case CLOSE:
      return unit[at + 5] === STATEMENT ? at + 6 : -1; // a portal's otherwise
    default:
      return -1;
  }
}

/** The statement names of one connection, as the session knows them. */
export class SessionStatements {
  private readonly prefix: Buffer;
  /** Names prepared and not closed, as the driver wrote them. */
  private readonly open = new Set<string>();

  constructor(connection: number) {
    this.prefix = Buffer.from(`c${connection}_`);
  }

  /**
   * The unit (whole typed messages) with every statement name the connection gave prefixed; the
   * unit itself when it names none (unnamed statements, simple queries).
   */
  rename(unit: Buffer): Buffer {
    const parts: Buffer[] = [];
    let copied = 0;
    for (let at = 0; at + 5 <= unit.length; ) {
      const type = unit[at];
      const end = at + 1 + unit.readInt32BE(at + 1);
      const nameAt = statementNameAt(unit, at);
      const nameEnd = nameAt > 0 ? unit.indexOf(0, nameAt) : -1;
      if (nameEnd > nameAt) {
        const name = unit.toString('utf8', nameAt, nameEnd);
        if (type === PARSE) this.open.add(name);
        else if (type === CLOSE) this.open.delete(name);
        const header = Buffer.alloc(5);
        header[0] = type;
        header.writeInt32BE(end - at - 1 + this.prefix.length, 1);
        parts.push(unit.subarray(copied, at), header, unit.subarray(at + 5, nameAt), this.prefix);
        copied = nameAt;
      }
      at = end;
    }
    if (parts.length === 0) return unit;
    parts.push(unit.subarray(copied));
    return Buffer.concat(parts);
  }

  /** A unit that closes the connection's statements still prepared (null: none). */
  closing(): Buffer | null {
    if (this.open.size === 0) return null;
    const prefix = this.prefix.toString();
    const closes = [...this.open].map((name) => serialize.close({ type: 'S', name: prefix + name }));
    return Buffer.concat([...closes, serialize.sync()]);
  }
}
