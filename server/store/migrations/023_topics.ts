// Topics, the memory of a conversation with an LLM over a dataset, and their messages (system, user
// and assistant), in order. A topic belongs to a dataset and an owner (an id of the caller's
// choosing); deleting either deletes its messages.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('topics', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('owner_id').notNullable();
    t.text('name').notNullable();
    t.jsonb('metadata');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    // An owner's topics are listed most recently changed first.
    t.index(['dataset_id', 'owner_id', 'updated_at']);
  });
  await db.schema.createTable('messages', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('topic_id').notNullable().references('topics.id').onDelete('CASCADE');
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.integer('sort_order').notNullable();
    t.text('role').notNullable();
    t.text('content').notNullable();
    t.integer('prompt_tokens');
    t.integer('completion_tokens');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.unique(['topic_id', 'sort_order']);
  });
  await db.raw("alter table messages add constraint messages_role check (role in ('system', 'user', 'assistant'))");
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('messages');
  await db.schema.dropTableIfExists('topics');
}
