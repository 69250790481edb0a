// express-openapi-validator finds a request's operation by compiling each route's path pattern with
// path-to-regexp anew, route after route, until one matches: for an operation late in the contract
// that is a sixth of a request's time on the service's thread. The patterns come from the contract
// and compile the same every time, so the function the validator calls is replaced, once, by one
// that remembers what it compiled.
import { createRequire } from 'node:module';

type Compile = (path: string, options?: object) => unknown;

/** The path-to-regexp module the validator itself requires (its exports object, which it reads at each call). */
export function validatorsPathToRegexp(): { pathToRegexp: Compile } {
  const validator = createRequire(import.meta.url).resolve('express-openapi-validator');
  return createRequire(validator)('path-to-regexp');
}

/** Patterns remembered at most: routes are few; past this, a pattern is compiled each time again. */
const MOST_PATTERNS = 10_000;
const remembering = new WeakSet<object>();

export function rememberRoutePatterns(): void {
  const module = validatorsPathToRegexp();
  if (remembering.has(module)) return;
  remembering.add(module);
  const compile = module.pathToRegexp;
  // By the two options the validator passes (other options: compiled each time).
  const compiled = [0, 1, 2, 3].map(() => new Map<string, unknown>());
  let count = 0;
  module.pathToRegexp = (path, options: { sensitive?: boolean; strict?: boolean } = {}) => {
    let flags = 0;
    for (const name in options) {
      if (name === 'sensitive') flags |= options.sensitive ? 1 : 0;
      else if (name === 'strict') flags |= options.strict ? 2 : 0;
      else return compile(path, options);
    }
    if (typeof path !== 'string') return compile(path, options);
    let found = compiled[flags].get(path);
    if (found === undefined) {
      found = compile(path, options);
      if (count++ < MOST_PATTERNS) compiled[flags].set(path, found);
    }
    return found;
  };
}
