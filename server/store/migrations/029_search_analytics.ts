// Search analytics (POST and PUT /api/analytics/search) over search_queries:
// - a search's rating (query_rating, with its note and metadata), set after the search;
// - its kind (search, autocomplete, search_over_groups, search_within_groups, rag) and method
//   (fulltext, semantic, hybrid, bm25) as columns, read from what the search recorded;
// - indexes for the reports that page through searches (by top score, latency, no results,
//   rated ones, ones with filters);
// - roll-ups per hour and per day (searches and latency by kind and method, and per day a latency
//   histogram), kept by triggers as searches are recorded, so that graphs, metrics and counts over
//   a long range read a few thousand rows instead of every search.
// A search record never changes but for its rating: the roll-ups rely on it, and a trigger refuses
// any other update.
import type { Knex } from 'knex';

/** Latency histogram buckets: bucket b holds latencies in [0.1 ms · 1.12^b, 0.1 ms · 1.12^(b+1)). See searchAnalytics/histogram.ts. */
const BUCKETS = 128;

export async function up(db: Knex): Promise<void> {
  await db.raw(`
    alter table search_queries
      add column query_rating integer,
      add column query_rating_note text,
      add column query_rating_metadata jsonb,
      add column kind text not null generated always as (
        case
          when search_type like 'autocomplete%' then 'autocomplete'
          when search_type like 'search_over_groups%' then 'search_over_groups'
          when search_type like 'search_within_groups%' then 'search_within_groups'
          when search_type like 'rag%' then 'rag'
          else 'search'
        end) stored,
      add column search_method text not null generated always as (coalesce(request_params->>'search_type', '')) stored`);

  // Low scores first, ties newest first: many searches share a score (every one that found nothing scores 0).
  await db.raw('create index search_queries_top_score on search_queries (dataset_id, top_score, created_at desc, id)');
  await db.raw('create index search_queries_latency on search_queries (dataset_id, latency_ms)');
  await db.raw('create index search_queries_no_results on search_queries (dataset_id, created_at) where cardinality(results) = 0');
  await db.raw('create index search_queries_rated on search_queries (dataset_id, created_at) where query_rating is not null');
  await db.raw(`create index search_queries_filtered on search_queries (dataset_id, created_at) where jsonb_typeof(request_params->'filters') = 'object'`);

  await db.raw(`
    create function search_latency_bucket(ms double precision) returns integer language sql immutable parallel safe
      return least(${BUCKETS - 1}, greatest(0, floor(ln(greatest(ms, 0.1) / 0.1) / ln(1.12))))::integer`);
  // The histogram of a list of buckets: element b + 1 counts the b's.
  await db.raw(`
    create function search_latency_histogram(buckets integer[]) returns integer[] language sql immutable parallel safe
      return array(
        select count(b)::integer
        from generate_series(0, ${BUCKETS - 1}) i left join unnest(buckets) b on b = i
        group by i order by i)`);
  await db.raw(`
    create function search_histogram_add(a integer[], b integer[]) returns integer[] language sql immutable parallel safe
      return array(select x + y from unnest(a, b) with ordinality t(x, y, i) order by i)`);

  for (const unit of ['hour', 'day'] as const) {
    await db.schema.createTable(`search_rollup_${unit}s`, (t) => {
      t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
      t.timestamp('bucket', { useTz: true }).notNullable();
      t.text('kind').notNullable();
      t.text('search_method').notNullable();
      t.bigInteger('searches').notNullable();
      t.double('latency_sum').notNullable();
      if (unit === 'day') t.specificType('latency_histogram', 'integer[]').notNullable();
      t.primary(['dataset_id', 'bucket', 'kind', 'search_method']);
    });
  }

  // Each statement's searches are added to the roll-ups at once; deleted ones (a dataset's, as it is
  // deleted) are taken from them, by update only: a row of a dataset being deleted may be gone already.
  await db.raw(`
    create function search_rollups_insert() returns trigger language plpgsql as $$
    begin
      insert into search_rollup_hours as r (dataset_id, bucket, kind, search_method, searches, latency_sum)
      select dataset_id, date_trunc('hour', created_at, 'UTC'), kind, search_method, count(*), sum(latency_ms)
      from new_rows group by 1, 2, 3, 4
      on conflict (dataset_id, bucket, kind, search_method) do update
        set searches = r.searches + excluded.searches, latency_sum = r.latency_sum + excluded.latency_sum;
      insert into search_rollup_days as r (dataset_id, bucket, kind, search_method, searches, latency_sum, latency_histogram)
      select dataset_id, date_trunc('day', created_at, 'UTC'), kind, search_method, count(*), sum(latency_ms),
        search_latency_histogram(array_agg(search_latency_bucket(latency_ms)))
      from new_rows group by 1, 2, 3, 4
      on conflict (dataset_id, bucket, kind, search_method) do update
        set searches = r.searches + excluded.searches, latency_sum = r.latency_sum + excluded.latency_sum,
            latency_histogram = search_histogram_add(r.latency_histogram, excluded.latency_histogram);
      return null;
    end $$`);
  await db.raw(`
    create function search_rollups_delete() returns trigger language plpgsql as $$
    begin
      update search_rollup_hours r
        set searches = r.searches - d.searches, latency_sum = r.latency_sum - d.latency_sum
        from (select dataset_id, date_trunc('hour', created_at, 'UTC') bucket, kind, search_method, count(*) searches, sum(latency_ms) latency_sum
              from old_rows group by 1, 2, 3, 4) d
        where (r.dataset_id, r.bucket, r.kind, r.search_method) = (d.dataset_id, d.bucket, d.kind, d.search_method);
      update search_rollup_days r
        set searches = r.searches - d.searches, latency_sum = r.latency_sum - d.latency_sum,
            latency_histogram = search_histogram_add(r.latency_histogram, d.latency_histogram)
        from (select dataset_id, date_trunc('day', created_at, 'UTC') bucket, kind, search_method, count(*) searches, sum(latency_ms) latency_sum,
                array(select -x from unnest(search_latency_histogram(array_agg(search_latency_bucket(latency_ms)))) with ordinality t(x, i) order by i) latency_histogram
              from old_rows group by 1, 2, 3, 4) d
        where (r.dataset_id, r.bucket, r.kind, r.search_method) = (d.dataset_id, d.bucket, d.kind, d.search_method);
      delete from search_rollup_hours where searches <= 0 and dataset_id in (select dataset_id from old_rows);
      delete from search_rollup_days where searches <= 0 and dataset_id in (select dataset_id from old_rows);
      return null;
    end $$`);
  for (const [operation, table] of [
    ['insert', 'new table as new_rows'],
    ['delete', 'old table as old_rows'],
  ] as const) {
    await db.raw(`
      create trigger search_rollups_${operation} after ${operation} on search_queries
        referencing ${table} for each statement execute function search_rollups_${operation}()`);
  }
  await db.raw(`
    create function search_queries_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'a search record changes only in its rating (query_rating, query_rating_note, query_rating_metadata)';
    end $$`);
  await db.raw(`
    create trigger search_queries_immutable before update of id, dataset_id, search_type, query, request_params, latency_ms, top_score, results, user_id, created_at
      on search_queries for each row execute function search_queries_immutable()`);

  // The searches recorded so far.
  await db.raw(`
    insert into search_rollup_hours (dataset_id, bucket, kind, search_method, searches, latency_sum)
    select dataset_id, date_trunc('hour', created_at, 'UTC'), kind, search_method, count(*), sum(latency_ms)
    from search_queries group by 1, 2, 3, 4`);
  await db.raw(`
    insert into search_rollup_days (dataset_id, bucket, kind, search_method, searches, latency_sum, latency_histogram)
    select dataset_id, date_trunc('day', created_at, 'UTC'), kind, search_method, count(*), sum(latency_ms),
      search_latency_histogram(array_agg(search_latency_bucket(latency_ms)))
    from search_queries group by 1, 2, 3, 4`);
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop trigger if exists search_queries_immutable on search_queries');
  await db.raw('drop trigger if exists search_rollups_insert on search_queries');
  await db.raw('drop trigger if exists search_rollups_delete on search_queries');
  await db.raw('drop function if exists search_queries_immutable(), search_rollups_insert(), search_rollups_delete()');
  await db.schema.dropTableIfExists('search_rollup_days');
  await db.schema.dropTableIfExists('search_rollup_hours');
  await db.raw(
    'drop function if exists search_histogram_add(integer[], integer[]), search_latency_histogram(integer[]), search_latency_bucket(double precision)',
  );
  for (const index of ['top_score', 'latency', 'no_results', 'rated', 'filtered']) await db.raw(`drop index if exists search_queries_${index}`);
  await db.raw(`
    alter table search_queries
      drop column if exists search_method, drop column if exists kind, drop column if exists query_rating_metadata,
      drop column if exists query_rating_note, drop column if exists query_rating`);
}
