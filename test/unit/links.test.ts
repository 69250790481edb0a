// Signed links and crawl secrets under URL_SIGNING_SECRET: changing the secret (a rotation) voids
// everything signed with the old one, and the stored secret is not consulted at all.
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { crawlWebhookSecret, signedLink, verifyLink, type SigningServices } from '../../server/domain/files/links.js';
import { HttpError } from '../../server/errors.js';

/** A database that fails any use: with URL_SIGNING_SECRET set, signing must not read it. */
const noDatabase = new Proxy(
  {},
  {
    get: () => {
      throw new Error('the database was used');
    },
  },
) as unknown as Knex;
const servicesWith = (secret: string): SigningServices => ({
  store: { db: noDatabase },
  config: { urlSigningSecret: secret, publicUrl: 'https://search.example.com', port: 8090 },
});
const FILE = '6f1c1d38-2f53-4bde-9d2a-3f4b8a1c0e11';
const queryOf = (link: string) => Object.fromEntries(new URL(link).searchParams);

describe('URL_SIGNING_SECRET', () => {
  const before = servicesWith('the-first-secret-0123456789abcdef');
  const after = servicesWith('the-second-secret-0123456789abcdef');

  it('signs links that it verifies, and a new secret voids them', async () => {
    const link = await signedLink(before, 'download', FILE, new Date(Date.now() + 60_000));
    expect(link).toMatch(/^https:\/\/search\.example\.com\/api\/file\/.*\/content\?expires=\d+&signature=/);
    await expect(verifyLink(before, 'download', FILE, queryOf(link))).resolves.toEqual({ contentType: null });
    const refused = await verifyLink(after, 'download', FILE, queryOf(link)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect(refused).toMatchObject({ status: 403, message: expect.stringMatching(/signature does not match/) });
  });

  it('derives crawl secrets from it', async () => {
    expect(await crawlWebhookSecret(before, FILE)).toBe(await crawlWebhookSecret(before, FILE));
    expect(await crawlWebhookSecret(after, FILE)).not.toBe(await crawlWebhookSecret(before, FILE));
  });
});
