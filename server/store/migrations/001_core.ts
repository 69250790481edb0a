// Tenancy and content: plans, organizations, keys, datasets, chunks, groups, files, crawls, RAG records.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw('create extension if not exists vector');
  await db.raw('create extension if not exists pg_trgm');

  await db.schema.createTable('plans', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.bigInteger('amount').notNullable().defaultTo(0);
    t.integer('chunk_count').notNullable();
    t.integer('dataset_count').notNullable();
    t.bigInteger('file_storage').notNullable();
    t.integer('message_count').notNullable();
    t.integer('messages_per_month');
    t.integer('user_count').notNullable();
    t.boolean('high_priority').notNullable().defaultTo(false);
    t.boolean('is_default').notNullable().defaultTo(false);
    t.boolean('visible').notNullable().defaultTo(true);
    t.text('billing_provider_id');
    t.timestamps(true, true);
  });
  // The plan every organization of a self-hosted instance starts on.
  await db('plans').insert({
    name: 'Self-hosted',
    chunk_count: 100_000_000,
    dataset_count: 10_000,
    file_storage: 1024 ** 4,
    message_count: 100_000_000,
    messages_per_month: null,
    user_count: 10_000,
    high_priority: true,
    is_default: true,
  });

  await db.schema.createTable('organizations', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.boolean('registerable').notNullable().defaultTo(true);
    t.integer('deleted').notNullable().defaultTo(0);
    t.jsonb('partner_configuration').notNullable().defaultTo('{}');
    t.timestamps(true, true);
  });

  await db.schema.createTable('subscriptions', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().unique().references('organizations.id').onDelete('CASCADE');
    t.uuid('plan_id').notNullable().references('plans.id');
    t.text('billing_provider_id');
    t.timestamp('current_period_end', { useTz: true });
    t.timestamps(true, true);
  });

  await db.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('key_hash').notNullable().unique();
    t.smallint('role').notNullable();
    t.specificType('dataset_ids', 'uuid[]');
    t.specificType('scopes', 'text[]');
    t.jsonb('default_params');
    t.timestamp('expires_at', { useTz: true });
    t.timestamps(true, true);
    t.index(['organization_id', 'id']);
  });

  await db.schema.createTable('datasets', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('tracking_id');
    t.jsonb('server_configuration').notNullable().defaultTo('{}');
    t.jsonb('client_configuration').notNullable().defaultTo('{}');
    t.integer('deleted').notNullable().defaultTo(0);
    t.timestamps(true, true);
    t.unique(['organization_id', 'tracking_id']);
  });

  await db.schema.createTable('chunks', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('tracking_id');
    t.text('chunk_html');
    t.text('link');
    t.jsonb('metadata');
    t.specificType('tag_set', 'text[]');
    t.timestamp('time_stamp', { useTz: false });
    t.double('weight').notNullable().defaultTo(0);
    t.double('num_value');
    t.specificType('image_urls', 'text[]');
    t.double('location_lat');
    t.double('location_lon');
    t.timestamps(true, true);
    t.unique(['dataset_id', 'tracking_id']);
  });

  await db.schema.createTable('chunk_groups', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('tracking_id');
    t.text('name').notNullable().defaultTo('');
    t.text('description').notNullable().defaultTo('');
    t.jsonb('metadata');
    t.specificType('tag_set', 'text[]');
    t.uuid('file_id');
    t.timestamps(true, true);
    t.unique(['dataset_id', 'tracking_id']);
    t.index(['file_id']);
  });

  await db.schema.createTable('chunk_group_bookmarks', (t) => {
    t.uuid('group_id').notNullable().references('chunk_groups.id').onDelete('CASCADE');
    t.uuid('chunk_id').notNullable().references('chunks.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['group_id', 'chunk_id']);
    t.index(['chunk_id']);
  });

  await db.schema.createTable('files', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('file_name').notNullable();
    t.bigInteger('size').notNullable();
    t.text('link');
    t.jsonb('metadata');
    t.text('tag_set');
    t.text('time_stamp');
    t.timestamps(true, true);
    t.index(['dataset_id', 'id']);
  });

  await db.schema.createTable('crawl_requests', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.uuid('scrape_id').notNullable().defaultTo(db.raw('gen_random_uuid()'));
    t.text('url').notNullable();
    t.text('crawl_type').notNullable().defaultTo('firecrawl');
    t.jsonb('status').notNullable().defaultTo(JSON.stringify('Pending'));
    t.integer('attempt_number').notNullable().defaultTo(0);
    t.text('interval');
    t.timestamp('next_crawl_at', { useTz: true });
    t.jsonb('crawl_options').notNullable().defaultTo('{}');
    t.timestamps(true, true);
    t.index(['dataset_id', 'created_at']);
  });

  await db.schema.createTable('rag_queries', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.uuid('search_id').notNullable();
    t.uuid('topic_id').notNullable();
    t.text('user_id').notNullable().defaultTo('');
    t.text('rag_type').notNullable().defaultTo('all_chunks');
    t.text('user_message').notNullable();
    t.text('llm_response').notNullable().defaultTo('');
    t.jsonb('results').notNullable().defaultTo('[]');
    t.double('top_score').notNullable().defaultTo(0);
    t.double('hallucination_score').notNullable().defaultTo(0);
    t.specificType('detected_hallucinations', 'text[]').notNullable().defaultTo('{}');
    t.jsonb('metadata');
    t.text('component_name');
    t.double('query_rating');
    t.text('query_rating_note');
    t.jsonb('query_rating_metadata');
    t.boolean('has_clicks').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.index(['dataset_id', 'created_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'rag_queries',
    'crawl_requests',
    'files',
    'chunk_group_bookmarks',
    'chunk_groups',
    'chunks',
    'datasets',
    'api_keys',
    'subscriptions',
    'organizations',
    'plans',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
}
