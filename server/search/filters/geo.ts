// Conditions on the chunk's location, in plain SQL (no PostGIS): a chunk without one never matches.
import type { Context, FieldKind } from './field.js';
import { all, sql, type Sql } from './sql.js';
import { fail, isObject, readPoint, type Point } from './values.js';

/** The mean Earth radius that Qdrant (the reference service's engine) uses for its geo filters. */
const EARTH_RADIUS_METRES = 6_371_000;

export const location: FieldKind = {
  operators: ['geo_radius', 'geo_bounding_box', 'geo_polygon'],
  build: (operator, condition, context) => {
    const path = `${context.path}.${operator}`;
    const value = condition[operator as 'geo_radius' | 'geo_bounding_box' | 'geo_polygon'];
    if (!isObject(value)) fail(path, 'must be an object');
    if (operator === 'geo_radius') return withinRadius(value, path, context);
    if (operator === 'geo_bounding_box') return withinBox(value, path, context);
    return withinPolygon(value, path, context);
  },
};

/** Great-circle (haversine) distance from the centre at most `radius` metres. */
function withinRadius(value: Record<string, unknown>, path: string, context: Context): Sql {
  const center = readPoint(value.center, `${path}.center`);
  const radius = value.radius;
  if (typeof radius !== 'number' || !Number.isFinite(radius) || radius < 0) fail(`${path}.radius`, 'must be a distance in metres, 0 or more');
  const [lat, lon] = [context.column('location_lat'), context.column('location_lon')];
  // least(1, ...): rounding can push the haversine term just above 1 for antipodal points, outside asin's domain.
  const halfChord = sql`power(sin(radians(${lat} - ${center.lat}::float8) / 2), 2)
    + cos(radians(${center.lat}::float8)) * cos(radians(${lat})) * power(sin(radians(${lon} - ${center.lon}::float8) / 2), 2)`;
  return sql`2 * ${EARTH_RADIUS_METRES}::float8 * asin(least(1, sqrt(${halfChord}))) <= ${radius}::float8`;
}

/** Inside the box from `top_left` (north-west) to `bottom_right` (south-east); it may cross the antimeridian. */
function withinBox(value: Record<string, unknown>, path: string, context: Context): Sql {
  const topLeft = readPoint(value.top_left, `${path}.top_left`);
  const bottomRight = readPoint(value.bottom_right, `${path}.bottom_right`);
  if (topLeft.lat < bottomRight.lat) fail(path, 'top_left must not be south of bottom_right');
  const [lat, lon] = [context.column('location_lat'), context.column('location_lon')];
  const west = topLeft.lon;
  const east = bottomRight.lon;
  const inLongitude = west <= east ? sql`${lon} between ${west}::float8 and ${east}::float8` : sql`(${lon} >= ${west}::float8 or ${lon} <= ${east}::float8)`;
  return sql`${lat} between ${bottomRight.lat}::float8 and ${topLeft.lat}::float8 and ${inLongitude}`;
}

/**
 * Inside the exterior ring and outside every interior ring (holes), on the plane of latitude and
 * longitude as Qdrant does. Ray casting with the even-odd rule over the edges of all rings at once:
 * a point in a hole crosses the hole's edges too, so its count turns even. The edges go to SQL as
 * four bound arrays (one parameter each, whatever the polygon's size), and a bounding-box test
 * comes first so most rows skip the edge scan.
 */
function withinPolygon(value: Record<string, unknown>, path: string, context: Context): Sql {
  const rings = [ring(value.exterior, `${path}.exterior`)];
  if (value.interior != null) {
    if (!Array.isArray(value.interior)) fail(`${path}.interior`, 'must be a list of rings');
    for (const [i, hole] of value.interior.entries()) rings.push(ring(hole, `${path}.interior[${i}]`));
  }
  const [lat1, lon1, lat2, lon2]: number[][] = [[], [], [], []];
  for (const points of rings) {
    points.forEach((from, i) => {
      const to = points[(i + 1) % points.length];
      lat1.push(from.lat);
      lon1.push(from.lon);
      lat2.push(to.lat);
      lon2.push(to.lon);
    });
  }
  const extent = (values: number[]) => [values.reduce((a, b) => Math.min(a, b)), values.reduce((a, b) => Math.max(a, b))];
  const [south, north] = extent(rings[0].map((p) => p.lat));
  const [west, east] = extent(rings[0].map((p) => p.lon));
  const [lat, lon] = [context.column('location_lat'), context.column('location_lon')];
  // nullif: a horizontal edge never straddles the ray, but SQL may evaluate the division anyway.
  const crossings = sql`(select count(*) from unnest(${lat1}::float8[], ${lon1}::float8[], ${lat2}::float8[], ${lon2}::float8[]) f_p(lat1, lon1, lat2, lon2)
    where (f_p.lat1 > ${lat}) <> (f_p.lat2 > ${lat})
      and ${lon} < (f_p.lon2 - f_p.lon1) * (${lat} - f_p.lat1) / nullif(f_p.lat2 - f_p.lat1, 0) + f_p.lon1)`;
  return all([sql`${lat} between ${south}::float8 and ${north}::float8`, sql`${lon} between ${west}::float8 and ${east}::float8`, sql`${crossings} % 2 = 1`]);
}

/** A ring's distinct vertices, at least three; closing it (repeating the first point last) is optional. */
function ring(value: unknown, path: string): Point[] {
  if (!Array.isArray(value)) fail(path, 'must be a list of points');
  const points = value.map((point, i) => readPoint(point, `${path}[${i}]`));
  const [first, last] = [points[0], points[points.length - 1]];
  if (points.length > 1 && first.lat === last.lat && first.lon === last.lon) points.pop();
  if (points.length < 3) fail(path, 'a ring needs at least three distinct points');
  return points;
}
