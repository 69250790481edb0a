// `npm run build`: the SDK compiled twice by tsc, to ES modules in dist/esm and to CommonJS in
// dist/cjs (marked as such by its own package.json), each with its type declarations.
import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const here = new URL('.', import.meta.url);

await rm(new URL('dist', here), { recursive: true, force: true });
for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', new URL(project, here).pathname], { stdio: 'inherit' });
}
await mkdir(new URL('dist/cjs', here), { recursive: true });
await writeFile(new URL('dist/cjs/package.json', here), JSON.stringify({ type: 'commonjs' }) + '\n');
