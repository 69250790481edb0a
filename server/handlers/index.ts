// The registry of every operation's handler; the compiler checks it against the contract.
import type { Handlers } from '../../generated/handlers.js';
import * as analytics from './analytics.js';
import * as analyticsClusters from './analyticsClusters.js';
import * as analyticsEvents from './analyticsEvents.js';
import * as analyticsQuery from './analyticsQuery.js';
import * as auth from './auth.js';
import * as chunk from './chunk.js';
import * as chunkGroup from './chunkGroup.js';
import * as crawl from './crawl.js';
import * as dataset from './dataset.js';
import * as experiment from './experiment.js';
import * as file from './file.js';
import * as health from './health.js';
import * as invitation from './invitation.js';
import * as message from './message.js';
import * as messageTools from './messageTools.js';
import * as metrics from './metrics.js';
import * as organization from './organization.js';
import * as publicPages from './public.js';
import * as recommendationAnalytics from './recommendationAnalytics.js';
import * as topic from './topic.js';
import * as user from './user.js';

export const handlers: Handlers = {
  ...health,
  ...metrics,
  ...organization,
  ...user,
  ...auth,
  ...invitation,
  ...dataset,
  ...chunk,
  ...chunkGroup,
  ...file,
  ...crawl,
  ...analytics,
  ...analyticsEvents,
  ...analyticsClusters,
  ...recommendationAnalytics,
  ...analyticsQuery,
  ...topic,
  ...message,
  ...messageTools,
  ...experiment,
  ...publicPages,
};
