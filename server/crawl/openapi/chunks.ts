// One operation as one chunk's HTML: method and path as the heading, then summary, description,
// parameters, request body and responses. Every piece of the document's text is escaped.
import type { Operation } from './document.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ESCAPES[c]);

/** Markdown kept as text: a paragraph per block separated by a blank line. */
function paragraphs(markdown: string): string {
  return markdown
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${escapeHtml(p)}</p>`)
    .join('');
}

const code = (s: string) => `<code>${escapeHtml(s)}</code>`;
const list = (items: string[]) => `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>`;
const media = (m: { type: string; schema: string | null }) => (m.schema ? `${code(m.type)}: ${escapeHtml(m.schema)}` : code(m.type));

export function operationHtml(op: Operation): string {
  const parts = [`<h2><span class="openapi-method">${op.method}</span> <span class="openapi-path">${escapeHtml(op.path)}</span></h2>`];
  if (op.summary) parts.push(`<p class="openapi-summary">${escapeHtml(op.summary)}</p>`);
  if (op.deprecated) parts.push('<p class="openapi-deprecated">Deprecated</p>');
  if (op.description) parts.push(paragraphs(op.description));
  if (op.operationId) parts.push(`<p>Operation id: ${code(op.operationId)}</p>`);
  if (op.parameters.length) {
    const items = op.parameters.map((p) => {
      const facts = [p.in, p.required ? 'required' : 'optional', ...(p.type ? [p.type] : [])].map(escapeHtml).join(', ');
      return `${code(p.name)} (${facts})${p.description ? `: ${escapeHtml(p.description)}` : ''}`;
    });
    parts.push(`<h3>Parameters</h3>${list(items)}`);
  }
  const body = op.requestBody;
  if (body) {
    const intro = [body.required ? 'Required.' : 'Optional.', ...(body.description ? [body.description] : [])].join(' ');
    parts.push(`<h3>Request body</h3><p>${escapeHtml(intro)}</p>${body.media.length ? list(body.media.map(media)) : ''}`);
  }
  if (op.responses.length) {
    const items = op.responses.map((r) => {
      const described = r.description ? `: ${escapeHtml(r.description)}` : '';
      const returned = r.media.length ? ` (${r.media.map(media).join('; ')})` : '';
      return `${code(r.key)}${described}${returned}`;
    });
    parts.push(`<h3>Responses</h3>${list(items)}`);
  }
  return parts.join('\n');
}
