// Roll-ups for the search analytics reports that count distinct things over all of a dataset's
// searches and events, which the hourly and daily roll-ups of migration 029 cannot answer:
// - head_queries: searches per query (search_query_counts);
// - searches_per_user by day: the users who searched each day (search_user_days) and how many
//   they are (search_user_day_counts);
// - event_funnel: the users who ever searched (search_users), who sent each named event
//   (analytics_event_users) and any event (analytics_event_any_users);
// - popular_filters: filter conditions by clause, field and kind (search_filter_conditions) and
//   their values (search_filter_values), read from a search's request by the same functions the
//   report uses on searches themselves.
// All are kept by statement triggers, exact: a statement's rows are added at once; deleted rows
// are taken away (a user leaves a day's set when no search of theirs is left in it). Users are
// keyed by a hash of their id (no id counts as the one user ''), queries and fields by a hash of
// their text, so that keys of any length fit an index. Conflicting keys are written in key order,
// so concurrent writers wait for each other rather than deadlock.
import type { Knex } from 'knex';

const CLAUSES = `array['must', 'should', 'must_not']`;
const CONDITION_TYPES = ['match_any', 'match_all', 'range', 'date_range', 'boolean', 'geo_bounding_box', 'geo_radius', 'geo_polygon'];

export async function up(db: Knex): Promise<void> {
  // A search's filter conditions and a condition's values, as popular_filters counts them.
  await db.raw(`
    create function search_filter_conditions(request_params jsonb)
      returns table (clause text, field text, filter_type text, condition jsonb) language sql immutable parallel safe as $$
      select c.clause, coalesce(condition->>'field', ''),
        case ${CONDITION_TYPES.map((t) => `when coalesce(jsonb_typeof(condition->'${t}'), 'null') <> 'null' then '${t}'`).join(' ')} else 'unknown' end,
        condition
      from unnest(${CLAUSES}) as c(clause)
      cross join lateral jsonb_array_elements(
        case when jsonb_typeof(request_params->'filters'->c.clause) = 'array' then request_params->'filters'->c.clause else '[]'::jsonb end) as condition
      where jsonb_typeof(request_params->'filters') = 'object'
    $$`);
  await db.raw(`
    create function search_filter_values(filter_type text, condition jsonb) returns setof text language sql immutable parallel safe as $$
      select jsonb_array_elements_text(condition->filter_type)
        where filter_type in ('match_any', 'match_all') and jsonb_typeof(condition->filter_type) = 'array'
      union all
      select (condition->filter_type)::text where filter_type not in ('match_any', 'match_all', 'unknown')
    $$`);
  await db.raw(`create function analytics_key(text) returns uuid language sql immutable parallel safe return md5($1)::uuid`);

  const table = (name: string, build: (t: Knex.CreateTableBuilder) => void) =>
    db.schema.createTable(name, (t) => {
      t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
      build(t);
    });
  await table('search_query_counts', (t) => {
    t.uuid('query_key').notNullable();
    t.text('query').notNullable();
    t.bigInteger('searches').notNullable();
    t.primary(['dataset_id', 'query_key']);
  });
  await db.raw('create index search_query_counts_most on search_query_counts (dataset_id, searches desc)');
  await table('search_users', (t) => {
    t.uuid('user_key').notNullable();
    t.primary(['dataset_id', 'user_key']);
  });
  await table('search_user_days', (t) => {
    t.timestamp('bucket', { useTz: true }).notNullable();
    t.uuid('user_key').notNullable();
    t.primary(['dataset_id', 'bucket', 'user_key']);
  });
  await table('search_user_day_counts', (t) => {
    t.timestamp('bucket', { useTz: true }).notNullable();
    t.bigInteger('users').notNullable();
    t.primary(['dataset_id', 'bucket']);
  });
  await table('search_filter_conditions', (t) => {
    t.text('clause').notNullable();
    t.text('filter_type').notNullable();
    t.uuid('field_key').notNullable();
    t.text('field').notNullable();
    t.bigInteger('uses').notNullable();
    t.primary(['dataset_id', 'clause', 'filter_type', 'field_key']);
  });
  await table('search_filter_values', (t) => {
    t.text('clause').notNullable();
    t.text('filter_type').notNullable();
    t.uuid('field_key').notNullable();
    t.uuid('value_key').notNullable();
    t.text('value').notNullable();
    t.bigInteger('uses').notNullable();
    t.primary(['dataset_id', 'clause', 'filter_type', 'field_key', 'value_key']);
  });
  await table('analytics_event_users', (t) => {
    t.uuid('name_key').notNullable();
    t.text('event_name').notNullable();
    t.uuid('user_key').notNullable();
    t.primary(['dataset_id', 'name_key', 'user_key']);
  });
  await table('analytics_event_any_users', (t) => {
    t.uuid('user_key').notNullable();
    t.primary(['dataset_id', 'user_key']);
  });

  // ---- searches ----
  // The conditions and values of a set of searches, signed: +1 each for inserted rows, -1 for deleted.
  const filterDeltas = (rows: string, sign: string) => `
    with conditions as (
      select s.dataset_id, f.clause, f.field, f.filter_type, f.condition
      from ${rows} s cross join lateral search_filter_conditions(s.request_params) f
      where jsonb_typeof(s.request_params->'filters') = 'object'),
    counted as (
      insert into search_filter_conditions as r (dataset_id, clause, filter_type, field_key, field, uses)
      select dataset_id, clause, filter_type, analytics_key(field), min(field), ${sign} count(*) from conditions
      group by 1, 2, 3, 4 order by 1, 2, 3, 4
      on conflict (dataset_id, clause, filter_type, field_key) do update set uses = r.uses + excluded.uses)
    insert into search_filter_values as r (dataset_id, clause, filter_type, field_key, value_key, value, uses)
    select c.dataset_id, c.clause, c.filter_type, analytics_key(c.field), analytics_key(v.value), min(v.value), ${sign} count(*)
    from conditions c cross join lateral search_filter_values(c.filter_type, c.condition) as v(value)
    group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
    on conflict (dataset_id, clause, filter_type, field_key, value_key) do update set uses = r.uses + excluded.uses`;

  // One statement for the counts and sets (each its own data-modifying part), one more only when
  // some of the searches have filters: a trigger's statements are most of what it costs.
  await db.raw(`
    create function search_report_rollups_insert() returns trigger language plpgsql as $$
    begin
      with queries as (
        insert into search_query_counts as r (dataset_id, query_key, query, searches)
        select dataset_id, analytics_key(query), min(query), count(*) from new_rows group by 1, 2 order by 1, 2
        on conflict (dataset_id, query_key) do update set searches = r.searches + excluded.searches),
      users as (
        insert into search_users (dataset_id, user_key)
        select distinct dataset_id, analytics_key(coalesce(user_id, '')) from new_rows order by 1, 2
        on conflict do nothing),
      fresh as (
        insert into search_user_days (dataset_id, bucket, user_key)
        select distinct dataset_id, date_trunc('day', created_at, 'UTC'), analytics_key(coalesce(user_id, '')) from new_rows order by 1, 2, 3
        on conflict do nothing
        returning dataset_id, bucket)
      insert into search_user_day_counts as r (dataset_id, bucket, users)
      select dataset_id, bucket, count(*) from fresh group by 1, 2 order by 1, 2
      on conflict (dataset_id, bucket) do update set users = r.users + excluded.users;

      if exists (select from new_rows where jsonb_typeof(request_params->'filters') = 'object') then
        ${filterDeltas('new_rows', '')};
      end if;
      return null;
    end $$`);

  // Deletions: counts taken away; a user leaves a set when no search of theirs is left in it. The
  // searches of a dataset being deleted are skipped: its roll-ups go with it (foreign keys).
  const gone = `(select * from old_rows o where exists (select from datasets d where d.id = o.dataset_id))`;
  await db.raw(`
    create function search_report_rollups_delete() returns trigger language plpgsql as $$
    begin
      if not exists (select from ${gone} g) then return null; end if;

      update search_query_counts r set searches = r.searches - d.searches
        from (select dataset_id, analytics_key(query) query_key, count(*) searches from ${gone} g group by 1, 2) d
        where (r.dataset_id, r.query_key) = (d.dataset_id, d.query_key);
      delete from search_query_counts where searches <= 0 and dataset_id in (select dataset_id from old_rows);

      delete from search_users u
        using (select distinct dataset_id, analytics_key(coalesce(user_id, '')) user_key from ${gone} g) g
        where (u.dataset_id, u.user_key) = (g.dataset_id, g.user_key)
          and not exists (select from search_queries q where q.dataset_id = g.dataset_id and analytics_key(coalesce(q.user_id, '')) = g.user_key);

      with left_days as (
        delete from search_user_days u
          using (select distinct dataset_id, date_trunc('day', created_at, 'UTC') bucket, analytics_key(coalesce(user_id, '')) user_key from ${gone} g) g
          where (u.dataset_id, u.bucket, u.user_key) = (g.dataset_id, g.bucket, g.user_key)
            and not exists (select from search_queries q where q.dataset_id = g.dataset_id and q.created_at >= g.bucket
                              and q.created_at < g.bucket + interval '1 day' and analytics_key(coalesce(q.user_id, '')) = g.user_key)
          returning u.dataset_id, u.bucket)
      update search_user_day_counts r set users = r.users - l.users
        from (select dataset_id, bucket, count(*) users from left_days group by 1, 2) l
        where (r.dataset_id, r.bucket) = (l.dataset_id, l.bucket);
      delete from search_user_day_counts where users <= 0 and dataset_id in (select dataset_id from old_rows);

      ${filterDeltas(gone, '-')};
      delete from search_filter_conditions where uses <= 0 and dataset_id in (select dataset_id from old_rows);
      delete from search_filter_values where uses <= 0 and dataset_id in (select dataset_id from old_rows);
      return null;
    end $$`);

  // ---- events ----
  await db.raw(`
    create function analytics_event_users_insert() returns trigger language plpgsql as $$
    begin
      insert into analytics_event_users (dataset_id, name_key, event_name, user_key)
      select distinct dataset_id, analytics_key(event_name), event_name, analytics_key(coalesce(user_id, '')) from new_rows order by 1, 2, 4
      on conflict do nothing;
      insert into analytics_event_any_users (dataset_id, user_key)
      select distinct dataset_id, analytics_key(coalesce(user_id, '')) from new_rows order by 1, 2
      on conflict do nothing;
      return null;
    end $$`);
  await db.raw(`
    create function analytics_event_users_delete() returns trigger language plpgsql as $$
    begin
      delete from analytics_event_users u
        using (select distinct o.dataset_id, analytics_key(o.event_name) name_key, o.event_name, analytics_key(coalesce(o.user_id, '')) user_key
               from ${gone} o) g
        where (u.dataset_id, u.name_key, u.user_key) = (g.dataset_id, g.name_key, g.user_key)
          and not exists (select from analytics_events e where e.dataset_id = g.dataset_id and e.event_name = g.event_name
                            and analytics_key(coalesce(e.user_id, '')) = g.user_key);
      delete from analytics_event_any_users u
        using (select distinct o.dataset_id, analytics_key(coalesce(o.user_id, '')) user_key
               from ${gone} o) g
        where (u.dataset_id, u.user_key) = (g.dataset_id, g.user_key)
          and not exists (select from analytics_events e where e.dataset_id = g.dataset_id and analytics_key(coalesce(e.user_id, '')) = g.user_key);
      return null;
    end $$`);
  // The sets hold an event's name and user as recorded: those never change.
  await db.raw(`
    create function analytics_events_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'an analytics event keeps its dataset, name and user';
    end $$`);
  await db.raw(`
    create trigger analytics_events_immutable before update of dataset_id, event_name, user_id on analytics_events
      for each row execute function analytics_events_immutable()`);

  for (const [target, fn] of [
    ['search_queries', 'search_report_rollups'],
    ['analytics_events', 'analytics_event_users'],
  ] as const) {
    await db.raw(`create trigger ${fn}_insert after insert on ${target} referencing new table as new_rows for each statement execute function ${fn}_insert()`);
    await db.raw(`create trigger ${fn}_delete after delete on ${target} referencing old table as old_rows for each statement execute function ${fn}_delete()`);
  }

  // What was recorded so far, as the triggers would have rolled it up.
  await db.raw(`
    insert into search_query_counts (dataset_id, query_key, query, searches)
    select dataset_id, analytics_key(query), min(query), count(*) from search_queries group by 1, 2`);
  await db.raw(`insert into search_users select distinct dataset_id, analytics_key(coalesce(user_id, '')) from search_queries`);
  await db.raw(`
    insert into search_user_days select distinct dataset_id, date_trunc('day', created_at, 'UTC'), analytics_key(coalesce(user_id, '')) from search_queries`);
  await db.raw(`insert into search_user_day_counts select dataset_id, bucket, count(*) from search_user_days group by 1, 2`);
  await db.raw(filterDeltas('search_queries', ''));
  await db.raw(`
    insert into analytics_event_users
    select distinct dataset_id, analytics_key(event_name), event_name, analytics_key(coalesce(user_id, '')) from analytics_events`);
  await db.raw(`insert into analytics_event_any_users select distinct dataset_id, analytics_key(coalesce(user_id, '')) from analytics_events`);
}

export async function down(db: Knex): Promise<void> {
  for (const [target, fn] of [
    ['search_queries', 'search_report_rollups'],
    ['analytics_events', 'analytics_event_users'],
  ] as const) {
    await db.raw(`drop trigger if exists ${fn}_insert on ${target}`);
    await db.raw(`drop trigger if exists ${fn}_delete on ${target}`);
    await db.raw(`drop function if exists ${fn}_insert(), ${fn}_delete()`);
  }
  await db.raw('drop trigger if exists analytics_events_immutable on analytics_events');
  await db.raw('drop function if exists analytics_events_immutable()');
  for (const t of [
    'analytics_event_any_users',
    'analytics_event_users',
    'search_filter_values',
    'search_filter_conditions',
    'search_user_day_counts',
    'search_user_days',
    'search_users',
    'search_query_counts',
  ])
    await db.schema.dropTableIfExists(t);
  await db.raw('drop function if exists analytics_key(text), search_filter_values(text, jsonb), search_filter_conditions(jsonb)');
}
