// The client `npm run generate` makes from the bundled contract with hey-api: the published SDK's,
// in sdk/src/generated (imports with `.js` extensions, as Node's ESM resolution and `moduleResolution:
// NodeNext` need them; no built-in base URL, the SDK's user gives one). The service's types, its
// tests and the bench use the same one, so there is one generated client.
import type { UserConfig } from '@hey-api/openapi-ts';

export interface GeneratedClient {
  /** The output folder, relative to the project. */
  folder: string;
  /** How its modules import each other: with which file extension. */
  module?: { extension: '.js' };
  plugins: UserConfig['plugins'];
}

export const generatedClients: GeneratedClient[] = [
  {
    folder: 'sdk/src/generated',
    module: { extension: '.js' },
    plugins: [{ name: '@hey-api/client-fetch', baseUrl: false }, '@hey-api/typescript', '@hey-api/sdk'],
  },
];

/** hey-api's configuration making `client` from the bundled contract at `input` into `outputPath`. */
export function clientConfig(client: GeneratedClient, input: string, outputPath: string, logLevel: 'warn' | 'silent'): UserConfig {
  return { input, output: { path: outputPath, postProcess: [], module: client.module }, plugins: client.plugins, logs: { level: logLevel } };
}
