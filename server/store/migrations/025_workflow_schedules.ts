// Schedules of the in-process workflow runner: a workflow started every `every_ms`, next at
// `next_run_at`. Kept in the database, a schedule outlives restarts and fires once when it is due
// again, however many runs were missed meanwhile.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('workflow_schedules', (t) => {
    t.text('id').primary();
    t.text('workflow').notNullable();
    t.text('workflow_id').notNullable();
    t.jsonb('input');
    t.bigInteger('every_ms').notNullable();
    t.timestamp('next_run_at', { useTz: true }).notNullable();
    t.index(['next_run_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('workflow_schedules');
}
