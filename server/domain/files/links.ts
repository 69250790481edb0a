// Signed URLs on this service: a file's download link (`s3_url`), the upload link of a CSV/JSONL
// file (`presigned_put_url`), and the webhook secret of a crawl. Each is an HMAC over what it
// grants, with the service's secret (URL_SIGNING_SECRET when the operator sets one, else the one
// stored in the database, so every instance shares it); it carries its expiry, and any change to
// it breaks the signature. Changing the secret (README, "Secrets") voids every link handed out.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { forbidden } from '../../errors.js';
import type { Services } from '../../services.js';

export type LinkPurpose = 'download' | 'upload';

/** Download links live an hour unless asked otherwise, a week at most. */
export const DEFAULT_DOWNLOAD_TTL_S = 3600;
/** Upload links live a day, as the reference's presigned PUT URLs do. */
export const UPLOAD_TTL_S = 24 * 3600;

/** What links need: the configuration (URL_SIGNING_SECRET, where clients reach us) and the database (the stored secret). */
export type SigningServices = { store: { db: Knex }; config: Pick<Services['config'], 'urlSigningSecret' | 'publicUrl' | 'port'> };

const secrets = new WeakMap<Knex, Promise<Buffer>>();

function signingSecret({ store: { db }, config }: SigningServices): Promise<Buffer> {
  if (config.urlSigningSecret) return Promise.resolve(Buffer.from(config.urlSigningSecret));
  let secret = secrets.get(db);
  if (!secret) {
    secret = db('service_secrets')
      .where({ name: 'url_signing' })
      .first('value')
      .then((row: { value: string } | undefined) => {
        if (!row) throw new Error('the URL signing secret is missing from service_secrets');
        return Buffer.from(row.value, 'base64url');
      });
    secret.catch(() => secrets.delete(db));
    secrets.set(db, secret);
  }
  return secret;
}

async function sign(services: SigningServices, ...parts: string[]): Promise<string> {
  return createHmac('sha256', await signingSecret(services))
    .update(parts.join('\n'))
    .digest('base64url');
}

function sameSignature(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The path both links of a file share; GET downloads, PUT uploads. */
export function contentPath(fileId: string): string {
  return `/api/file/${fileId}/content`;
}

/** Where clients reach this service: PUBLIC_URL, else its own address. */
export function serviceBaseUrl(services: Pick<SigningServices, 'config'>): string {
  return services.config.publicUrl ?? `http://127.0.0.1:${services.config.port}`;
}

export async function signedLink(
  services: SigningServices,
  purpose: LinkPurpose,
  fileId: string,
  expiresAt: Date,
  contentType?: string | null,
): Promise<string> {
  const expires = String(Math.floor(expiresAt.getTime() / 1000));
  // Appended, not resolved: a PUBLIC_URL may have a path of its own (a reverse proxy's prefix).
  const url = new URL(serviceBaseUrl(services) + contentPath(fileId));
  url.searchParams.set('expires', expires);
  if (contentType) url.searchParams.set('content_type', contentType);
  url.searchParams.set('signature', await sign(services, purpose, fileId, expires, contentType ?? ''));
  return url.toString();
}

/** Checks a link's signature and expiry (403 otherwise); returns the content type it carries. */
export async function verifyLink(
  services: SigningServices,
  purpose: LinkPurpose,
  fileId: string,
  query: Record<string, unknown>,
  now = new Date(),
): Promise<{ contentType: string | null }> {
  const { expires, signature } = query;
  const contentType = typeof query.content_type === 'string' ? query.content_type : null;
  if (typeof expires !== 'string' || typeof signature !== 'string' || !/^\d+$/.test(expires)) {
    throw forbidden('this link is not signed: it needs its expires and signature parameters');
  }
  const expected = await sign(services, purpose, fileId, expires, contentType ?? '');
  if (!sameSignature(signature, expected)) throw forbidden('the link was altered or was not issued by this service: its signature does not match');
  if (now.getTime() >= Number(expires) * 1000) {
    throw forbidden(`the link expired at ${new Date(Number(expires) * 1000).toISOString()}; ask for a new one`);
  }
  return { contentType };
}

/** The secret a crawler sends as `metadata.webhook_secret` with the pages of crawl `scrapeId`. */
export function crawlWebhookSecret(services: SigningServices, scrapeId: string): Promise<string> {
  return sign(services, 'crawl-webhook', scrapeId);
}

export function sameSecret(given: string, expected: string): boolean {
  return sameSignature(given, expected);
}
