// The registry of every operation's handler; the compiler checks it against the contract.
import type { Handlers } from '../../generated/handlers.js';
import * as analytics from './analytics.js';
import * as chunk from './chunk.js';
import * as chunkGroup from './chunkGroup.js';
import * as crawl from './crawl.js';
import * as file from './file.js';
import * as health from './health.js';
import * as organization from './organization.js';

export const handlers: Handlers = { ...health, ...organization, ...chunk, ...chunkGroup, ...file, ...crawl, ...analytics };
