// Disk storage: each object is a file under the root, at its key's path. A put writes a temporary
// file in the root's `.tmp` directory (same file system), fsyncs it and renames it into place, so a
// reader or a crash never sees a partial object under its final name; any failure removes the
// temporary file. Keys cannot start with a dot, so `.tmp` is never an object's path.
// A temporary file is named after its writer (host and process id), so that opening the storage can
// remove what a killed process left without touching the puts of other live processes (several
// services may share DATA_DIR, as they share the database).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, readlinkSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertValidKey, ObjectNotFoundError, ObjectTooLargeError, type FileStorage, type StoredObject } from './types.js';

const TEMP_DIR = '.tmp';
/** Temporary files of other hosts (or unnamed) older than this were left by a crash (a put under way is never this old) and go at open. */
const STALE_TEMP_MS = 24 * 3600 * 1000;
/**
 * Where process ids mean the same (this host and PID namespace, as containers may share a host
 * name), as a file name segment without `.`: temporary files are named `<host>.<pid>.<random>`.
 */
const HOST = `${os.hostname().replace(/[^A-Za-z0-9_-]/g, '_') || 'host'}${pidNamespace()}`;

export async function openDiskStorage(root: string): Promise<FileStorage> {
  await mkdir(path.join(root, TEMP_DIR), { recursive: true });
  await removeStaleTemporaries(path.join(root, TEMP_DIR));
  return new DiskStorage(root);
}

class DiskStorage implements FileStorage {
  readonly kind = 'disk' as const;

  constructor(private readonly root: string) {}

  async put(key: string, body: Readable, opts: { maxBytes: number }): Promise<StoredObject> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temp = path.join(this.root, TEMP_DIR, `${HOST}.${process.pid}.${randomBytes(12).toString('hex')}`);
    const hash = createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        if (bytes > opts.maxBytes) return done(new ObjectTooLargeError(opts.maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const file = createWriteStream(temp, { flags: 'wx' });
    try {
      await pipeline(body, meter, file);
      const handle = await open(temp, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      // A body that fails before the file has opened leaves the open pending: removing the file
      // before the stream has closed would let the open create it afterwards, and it would stay.
      if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
      await rm(temp, { force: true });
      throw error;
    }
    return { bytes, sha256: hash.digest('hex') };
  }

  get(key: string): Readable {
    const out = new PassThrough();
    const file = createReadStream(this.pathOf(key));
    file.once('error', (error: NodeJS.ErrnoException) => out.destroy(error.code === 'ENOENT' ? new ObjectNotFoundError(key) : error));
    // A reader that stops early (a download cut off) closes the file too.
    out.once('close', () => file.destroy());
    return file.pipe(out);
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async removeAll(prefix: string): Promise<void> {
    await rm(this.pathOf(prefix), { recursive: true, force: true });
  }

  private pathOf(key: string): string {
    assertValidKey(key);
    return path.join(this.root, ...key.split('/'));
  }
}

/**
 * Removes the temporary files no live put can own: this host's whose process is gone, or is this
 * one (opening happens before any put), and any file older than a day (other hosts cannot be asked).
 */
async function removeStaleTemporaries(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const full = path.join(dir, name);
    const [host, pid] = name.split('.');
    const orphaned = host === HOST && /^\d+$/.test(pid ?? '') && (Number(pid) === process.pid || !processAlive(Number(pid)));
    if (!orphaned) {
      const { mtimeMs } = await stat(full).catch(() => ({ mtimeMs: Date.now() }));
      if (Date.now() - mtimeMs <= STALE_TEMP_MS) continue;
    }
    await rm(full, { force: true });
  }
}

function pidNamespace(): string {
  try {
    return `-${readlinkSync('/proc/self/ns/pid').replace(/\D/g, '')}`;
  } catch {
    return ''; // not Linux: the host name alone
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}
