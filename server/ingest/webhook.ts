// The POST to a tenant's webhook (an upload's webhook_url when its file is done, a crawl's
// webhook_urls when a run ends): one attempt per call (the workflow engine retries with back-off);
// an answer outside 2xx, a refused connection or a slow endpoint is an error. The URL is the tenant's: it goes through outboundFetch, so it reaches no private
// address the operator has not allowed, and it is sent no key.
import { outboundFetch, type OutboundSettings } from '../engines/outbound.js';

export interface WebhookBody {
  event_type: 'file_uploaded' | 'file_upload_failed';
  dataset_id: string;
  file_id: string;
  file_name: string;
  status: 'completed' | 'failed';
  chunks_created: number;
  error: string | null;
}

/** What a crawl's webhooks get when a run ends. */
export interface CrawlWebhookBody {
  event_type: 'crawl_completed' | 'crawl_failed';
  dataset_id: string;
  crawl_id: string;
  status: 'completed' | 'failed';
  pages_stored: number;
  error: string | null;
  /** The crawl's webhook_metadata, as given. */
  metadata: unknown;
}

export const WEBHOOK_TIMEOUT_MS = 10_000;

export async function postWebhook(url: string, body: WebhookBody | CrawlWebhookBody, outbound: OutboundSettings): Promise<number> {
  let response;
  try {
    response = await outboundFetch(outbound, url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      timeoutMs: WEBHOOK_TIMEOUT_MS,
    });
  } catch (error) {
    throw new Error(`webhook ${url} was not delivered: ${(error as Error).message}`);
  }
  await response.body?.cancel();
  if (!response.ok) throw new Error(`webhook ${url} answered ${response.status}`);
  return response.status;
}
