// Starts the helper thread of a split BM25 walk (walkHelpers.ts): TypeScript compiled as the
// service's is (tsx), then its side of the walk (walkShare.ts). Plain JavaScript, loaded by Node itself.
import { register } from 'tsx/esm/api';

register();
await import('./walkShare.ts');
