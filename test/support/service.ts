// A running service for HTTP-level tests, with a fetch that checks every response against the contract.
import { expect } from 'vitest';
import { createClient, type Client } from '../../sdk/src/generated/client/index.js';
import { createDataset } from '../../sdk/src/generated/sdk.gen.js';
import type { DatasetConfigurationDto } from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { startService, type RunningService } from '../../server/main.js';
import { checkResponse } from './contract.js';
import { loadConfig } from '../../server/config.js';
import { testEnvironment } from './env.js';

export const ADMIN_KEY = 'test-admin-key-0123456789';

export interface TestService extends RunningService {
  /** The generated SDK's client, authenticated with the given key (the administrator's by default). */
  client(apiKey?: string): Client;
  /** A raw request; the response is checked against the contract too. */
  request(method: string, path: string, init?: { headers?: Record<string, string>; body?: unknown; rawBody?: string }): Promise<Reply>;
  /** A dataset created through the API, returned as its stored row (what the domain code takes). */
  newDataset(organizationId: string, name: string, serverConfiguration?: DatasetConfigurationDto): Promise<DatasetRow>;
}

export interface Reply {
  status: number;
  body: any;
}

export async function startTestService(extraEnv: Record<string, string> = {}): Promise<TestService> {
  return serviceOn(await testEnvironment(extraEnv));
}

/** A service on the given environment: started again on the same one, it finds what the last left. */
export async function serviceOn(environment: Record<string, string>): Promise<TestService> {
  const service = await startService(loadConfig(environment));
  const client = (apiKey = ADMIN_KEY) => createClient({ baseUrl: service.url, fetch: checkedFetch, auth: () => apiKey });
  return {
    ...service,
    client,
    newDataset: async (organizationId, name, serverConfiguration) => {
      const { data, error } = await createDataset({
        client: client(),
        headers: { 'SVC-Organization': organizationId },
        body: { dataset_name: name, server_configuration: serverConfiguration },
      });
      expect(error).toBeUndefined();
      return (await service.services.store.db('datasets').where({ id: data!.id }).first()) as DatasetRow;
    },
    request: async (method, path, init = {}) => {
      const headers: Record<string, string> = { ...init.headers };
      let payload: string | undefined = init.rawBody;
      if (init.body !== undefined) {
        payload = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      if (payload !== undefined) headers['content-type'] ??= 'application/json';
      const response = await checkedFetch(new Request(service.url + path, { method, headers, body: payload }));
      const text = await response.text();
      return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
    },
  };
}

/** A fetch whose every response is checked against the contract; `send` makes the request. */
export async function checkedFetch(input: RequestInfo | URL, init?: RequestInit, send: typeof fetch = fetch): Promise<Response> {
  const request = new Request(input, init);
  const response = await send(request.clone());
  const text = await response.clone().text();
  const contentType = response.headers.get('content-type');
  const body = text && contentType?.includes('json') ? JSON.parse(text) : text || undefined;
  checkResponse(request.method, request.url, response.status, body, contentType);
  return response;
}
