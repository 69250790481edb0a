// The POST to an upload's webhook_url when its file is done: one attempt per call (the workflow
// engine retries with back-off); an answer outside 2xx, a refused connection or a slow endpoint
// is an error.
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

export async function postWebhook(url: string, body: WebhookBody): Promise<number> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new Error(`webhook_url ${url} is not a URL`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`webhook_url ${url} is not an http or https URL`);
  const response = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`webhook ${url} answered ${response.status}`);
  return response.status;
}
