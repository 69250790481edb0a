// `location_bias`: how close each candidate is to the given point, relative to the others: 1 for the
// closest, 0 for the farthest, linear in the great-circle distance between (all 1 when they are all
// as far). A chunk without a location counts as 0, no closer than the farthest.
import type { Candidate } from './candidates.js';

/** The mean Earth radius, as the geo filters use. */
const EARTH_RADIUS_METRES = 6_371_000;

export function closenessOf(candidates: Candidate[], point: { lat: number; lon: number }): number[] {
  const distances = candidates.map((c) => (c.lat == null || c.lon == null ? null : haversine(point, { lat: c.lat, lon: c.lon })));
  const known = distances.filter((d): d is number => d != null);
  const nearest = known.reduce((m, d) => Math.min(m, d), Infinity);
  const farthest = known.reduce((m, d) => Math.max(m, d), -Infinity);
  return distances.map((d) => (d == null ? 0 : farthest > nearest ? (farthest - d) / (farthest - nearest) : 1));
}

/** Great-circle distance in metres. */
export function haversine(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((b.lat - a.lat) * rad) / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(((b.lon - a.lon) * rad) / 2) ** 2;
  return 2 * EARTH_RADIUS_METRES * Math.asin(Math.min(1, Math.sqrt(h)));
}
