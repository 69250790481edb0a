// The public page's script: client/page.ts and the SDK's source bundled for the browser by esbuild,
// once per process on the first page served (tens of milliseconds), then kept in memory.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export interface PageScript {
  code: string;
  /** The script's SHA-256 for a Content-Security-Policy `script-src`, as `'sha256-…'`. */
  hash: string;
}

let bundled: Promise<PageScript> | null = null;

export function pageScript(): Promise<PageScript> {
  bundled ??= bundle().catch((error) => {
    bundled = null; // the next page tries again
    throw error;
  });
  return bundled;
}

async function bundle(): Promise<PageScript> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./client/page.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  // Inlined in a <script> element: a `</script` inside a string would end the element early.
  const code = result.outputFiles[0].text.replaceAll('</script', '<\\/script');
  return { code, hash: `'sha256-${createHash('sha256').update(code).digest('base64')}'` };
}
