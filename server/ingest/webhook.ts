// The POST to an upload's webhook_url when its file is done: one attempt per call (the workflow
// engine retries with back-off); an answer outside 2xx, a refused connection or a slow endpoint
// is an error. The URL is the tenant's: it goes through outboundFetch, so it reaches no private
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

export const WEBHOOK_TIMEOUT_MS = 10_000;

export async function postWebhook(url: string, body: WebhookBody, outbound: OutboundSettings): Promise<number> {
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
