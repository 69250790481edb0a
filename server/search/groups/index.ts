// Group searches and the gathering of chunk hits by group (shared with group recommendations).
export { fillGroups, gatherByGroup, groupRows, groupsHolding, MAX_GROUP_WINDOW, MIN_GROUP_WINDOW, rankGroups, type GroupHits } from './gather.js';
export { v1Group, v2Group, type ChunkShapes, type FoundGroup } from './responses.js';
export { DEFAULT_GROUP_SIZE, groupSearchResponse, searchOverGroups, searchWithinGroup, withinGroupResponse } from './search.js';
