// The public page's HTML: the frame the script fills in, its settings as JSON, its style, and a
// Content-Security-Policy that lets nothing run but the page's own script and talk to nothing but
// this service, so that a chunk's HTML could do no harm even if it got through the sanitizer.
import type { PagePreview, PageSettings } from './settings.js';
import type { PageScript } from './script.js';

export interface RenderedPage {
  html: string;
  headers: Record<string, string>;
}

export function renderPage(settings: PageSettings, preview: PagePreview, script: PageScript): RenderedPage {
  const meta = [
    ['og:title', preview.title],
    ['og:description', preview.description],
    ['og:image', preview.image],
  ]
    .filter(([, value]) => value)
    .map(([property, value]) => `<meta property="${property}" content="${escapeHtml(value!)}">`)
    .join('\n');
  const description = preview.description ? `<meta name="description" content="${escapeHtml(preview.description)}">` : '';
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(preview.title)}</title>
${description}
${meta}
<style>${STYLE}</style>
</head>
<body>
<header>
<img id="logo" hidden>
<h1 id="heading">${escapeHtml(settings.heading)}</h1>
</header>
<main>
<form id="search-form" role="search">
<input id="query" type="search" autocomplete="off" aria-label="Search" autofocus>
</form>
<div id="examples" class="examples"></div>
<div id="tags" class="tags" aria-label="Filter by tag"></div>
<p id="status" role="status"></p>
<ol id="results" class="results"></ol>
<section id="chat" hidden>
<h2>Ask</h2>
<div id="chat-log" class="chat-log" aria-live="polite"></div>
<form id="chat-form">
<textarea id="chat-input" rows="2" placeholder="Ask a question about these documents" aria-label="Question"></textarea>
<button type="submit">Ask</button>
</form>
</section>
</main>
<dialog id="chunk">
<h2 id="chunk-title"></h2>
<div id="chunk-body" class="chunk-body"></div>
<p><a id="chunk-link" hidden rel="noopener noreferrer">Open the source</a></p>
<button id="chunk-close" type="button">Close</button>
</dialog>
<footer id="footer"></footer>
<script type="application/json" id="page-settings">${jsonInHtml(settings)}</script>
<script type="module">${script.code}</script>
</body>
</html>
`;
  const policy = [
    "default-src 'none'",
    `script-src ${script.hash}`,
    "style-src 'unsafe-inline'",
    'img-src http: https: data:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return {
    html,
    headers: {
      'Content-Security-Policy': policy,
      'X-Content-Type-Options': 'nosniff',
      // The page holds a key made for it; it is public, but there is no reason to keep copies around.
      'Cache-Control': 'no-cache',
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that cannot end its <script> element nor open a comment in it. */
function jsonInHtml(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

const STYLE = `
:root{--brand:#1e3a8a;--font:system-ui,-apple-system,"Segoe UI",sans-serif;--bg:#fff;--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--card:#f9fafb}
:root[data-theme=dark]{--bg:#0b1020;--fg:#e5e7eb;--muted:#9ca3af;--line:#1f2937;--card:#111827}
*{box-sizing:border-box}
body{margin:0;font-family:var(--font);background:var(--bg);color:var(--fg);line-height:1.5}
header{display:flex;align-items:center;gap:.75rem;padding:1rem 1.5rem;background:var(--brand);color:#fff}
header img{height:2rem}
header h1{font-size:1.25rem;margin:0}
main{max-width:48rem;margin:0 auto;padding:1.5rem}
#query{width:100%;font-size:1.125rem;padding:.75rem 1rem;border:2px solid var(--line);border-radius:.5rem;background:var(--bg);color:var(--fg)}
#query:focus{outline:none;border-color:var(--brand)}
.examples,.tags{display:flex;flex-wrap:wrap;gap:.5rem;margin:.75rem 0}
.examples button,.tag{border:1px solid var(--line);background:var(--card);color:var(--fg);border-radius:999px;padding:.25rem .75rem;cursor:pointer;font:inherit;font-size:.875rem}
.tag[aria-pressed=true]{background:var(--brand);border-color:var(--brand);color:#fff}
#status{color:var(--muted);min-height:1.5em;margin:.25rem 0}
.results{list-style:none;padding:0;margin:0;display:grid;gap:.75rem}
.result{display:block;width:100%;text-align:left;border:1px solid var(--line);border-radius:.5rem;background:var(--card);color:var(--fg);padding:.75rem 1rem;cursor:pointer;font:inherit}
.result:hover,.result:focus{border-color:var(--brand)}
.result .title{display:block;margin-bottom:.25rem}
.passage{margin:.25rem 0;color:var(--fg)}
.chunk-tags{font-size:.8rem;color:var(--muted)}
mark{background:color-mix(in srgb,var(--brand) 22%,transparent);color:inherit;border-radius:.2em;padding:0 .1em}
dialog{max-width:44rem;width:calc(100% - 2rem);border:1px solid var(--line);border-radius:.75rem;background:var(--bg);color:var(--fg);padding:1.5rem}
dialog::backdrop{background:rgb(0 0 0 / .4)}
.chunk-body{max-height:60vh;overflow:auto}
button[type=submit],#chunk-close{background:var(--brand);color:#fff;border:0;border-radius:.375rem;padding:.5rem 1rem;cursor:pointer;font:inherit}
button:disabled{opacity:.6;cursor:default}
#chat{margin-top:2rem;border-top:1px solid var(--line);padding-top:1rem}
#chat-form{display:flex;gap:.5rem}
#chat-form textarea{flex:1;font:inherit;padding:.5rem;border:1px solid var(--line);border-radius:.375rem;background:var(--bg);color:var(--fg)}
.chat-log{display:grid;gap:.5rem;margin-bottom:.75rem}
.message{padding:.5rem .75rem;border-radius:.5rem;white-space:pre-wrap}
.message.user{background:var(--card);justify-self:end}
.message.assistant{border:1px solid var(--line)}
.message.error{border-color:#dc2626;color:#dc2626}
.sources button{background:none;border:0;color:var(--brand);cursor:pointer;padding:0;font:inherit;text-align:left}
footer{max-width:48rem;margin:0 auto;padding:1rem 1.5rem;color:var(--muted);font-size:.875rem}
footer a{color:inherit}
`;
