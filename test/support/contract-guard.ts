// Fails any test during which a response departed from the contract.
import { afterEach, expect } from 'vitest';
import { violations } from './contract.js';

afterEach(() => {
  const seen = violations.splice(0);
  expect(seen, 'responses that depart from the contract').toEqual([]);
});
