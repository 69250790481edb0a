// A process in the middle of a put (run by storage-temporaries.test.ts, never by vitest itself):
// opens the disk storage at argv[2], streams 64 KiB of a body that never ends, prints `writing`
// once those bytes are in its temporary file, and waits to be killed.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { openDiskStorage } from '../../server/engines/storage/disk.js';

const root = process.argv[2];
const storage = await openDiskStorage(root);
let sent = false;
const body = new Readable({
  read() {
    if (!sent) this.push(Buffer.alloc(64 * 1024, 'p'));
    sent = true; // then nothing more: the upload hangs, as one cut off mid-way by a kill would
  },
});
void storage.put('ds/upload', body, { maxBytes: 1 << 30 });
const temp = path.join(root, '.tmp');
for (;;) {
  const mine = (await readdir(temp)).filter((n) => n.includes(`.${process.pid}.`));
  if (mine.length && (await stat(path.join(temp, mine[0]))).size > 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write('writing\n');
setInterval(() => {}, 60_000);
