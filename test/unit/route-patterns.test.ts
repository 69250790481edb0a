// The validator's route patterns are compiled once: the path-to-regexp it requires answers a pattern
// it has seen with what it compiled then, which still matches as a fresh compilation does.
import { expect, it } from 'vitest';
import { rememberRoutePatterns, validatorsPathToRegexp } from '../../server/http/routePatterns.js';

it("remembers the validator's compiled route patterns", () => {
  const module = validatorsPathToRegexp();
  const fresh = module.pathToRegexp('/api/chunk/:chunk_id', { strict: false, sensitive: false }) as { regexp: RegExp };
  rememberRoutePatterns();
  rememberRoutePatterns();
  const first = module.pathToRegexp('/api/chunk/:chunk_id', { strict: false, sensitive: false }) as { regexp: RegExp; keys: { name: string }[] };
  expect(module.pathToRegexp('/api/chunk/:chunk_id', { strict: false, sensitive: false })).toBe(first);
  expect(module.pathToRegexp('/api/chunk/:chunk_id', { strict: true, sensitive: false })).not.toBe(first);
  expect(first.regexp.source).toBe(fresh.regexp.source);
  expect(first.regexp.exec('/api/chunk/abc')?.[1]).toBe('abc');
  expect(first.keys.map((k) => k.name)).toEqual(['chunk_id']);
});
