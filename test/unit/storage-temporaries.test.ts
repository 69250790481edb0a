// Partial uploads: a process killed in the middle of a put leaves its temporary file in
// DATA_DIR/files/.tmp; the next open of the storage removes it, but never the temporary file of a
// put still under way in another live process sharing the directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readlinkSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDiskStorage } from '../../server/engines/storage/disk.js';
import { projectPath } from '../../scripts/contract/paths.js';

let root: string;
const tmp = () => path.join(root, '.tmp');
const host = `${os.hostname().replace(/[^A-Za-z0-9_-]/g, '_')}-${readlinkSync('/proc/self/ns/pid').replace(/\D/g, '')}`;
const children: ChildProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-storage-tmp-'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

/** Starts a process putting an endless body; resolves once its partial bytes are on disk. */
async function uploader(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('test/unit/storage-put.child.ts'), root], {
    cwd: projectPath(''),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  for await (const line of createInterface({ input: child.stdout! })) if (line === 'writing') return child;
  throw new Error(`the uploader exited with ${child.exitCode} before writing`);
}

async function killed(child: ChildProcess): Promise<void> {
  const exit = once(child, 'exit');
  child.kill('SIGKILL');
  await exit;
}

const temporaries = async () => (await readdir(tmp())).sort();

describe('disk storage: temporary files of interrupted puts', () => {
  it('keeps a live put’s partial file at open, and removes it once its process was killed', async () => {
    const child = await uploader();
    const [partial] = await temporaries();
    expect(partial).toMatch(new RegExp(`^${host}\\.${child.pid}\\.[0-9a-f]{24}$`));
    expect((await stat(path.join(tmp(), partial))).size).toBe(64 * 1024);

    // Another service opening the same directory while the upload is under way leaves it alone.
    await openDiskStorage(root);
    expect(await temporaries()).toEqual([partial]);

    await killed(child);
    expect(await temporaries()).toEqual([partial]); // the kill left it behind
    await openDiskStorage(root);
    expect(await temporaries()).toEqual([]);
  });

  it('removes this process’s own leftovers, keeps other hosts’ recent files and removes those over a day old', async () => {
    const own = `${host}.${process.pid}.${'a'.repeat(24)}`; // a previous life with the same pid (pid 1 in a container)
    const otherFresh = `another-host.4242.${'b'.repeat(24)}`;
    const otherOld = `another-host.4243.${'c'.repeat(24)}`;
    const unnamedOld = 'written-before-names-had-owners';
    for (const name of [own, otherFresh, otherOld, unnamedOld]) await writeFile(path.join(tmp(), name), 'partial');
    const twoDaysAgo = new Date(Date.now() - 48 * 3600 * 1000);
    await utimes(path.join(tmp(), otherOld), twoDaysAgo, twoDaysAgo);
    await utimes(path.join(tmp(), unnamedOld), twoDaysAgo, twoDaysAgo);
    await openDiskStorage(root);
    expect(await temporaries()).toEqual([otherFresh]);
  });
});
