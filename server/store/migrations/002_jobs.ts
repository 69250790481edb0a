// Durable work of the in-process workflow runner: one row per workflow run (the id is the
// workflow id) and one per completed activity call, so a restarted process can replay a
// flow from its journal instead of redoing finished steps.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('jobs', (t) => {
    t.text('id').primary();
    t.text('workflow').notNullable();
    t.jsonb('input').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.jsonb('result');
    t.text('error');
    /** How many times the flow has been started or resumed. */
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamps(true, true);
    t.index(['status', 'created_at']);
  });
  await db.raw(`alter table jobs add constraint jobs_status_check check (status in ('pending', 'running', 'completed', 'failed'))`);

  await db.schema.createTable('job_steps', (t) => {
    t.text('job_id').notNullable().references('jobs.id').onDelete('CASCADE');
    /** The activity call's position in the flow; replays match calls by it. */
    t.integer('seq').notNullable();
    t.text('activity').notNullable();
    /** `{ "value": <result> }`, so an undefined result survives the round trip. */
    t.jsonb('result').notNullable();
    t.integer('attempts').notNullable();
    t.timestamp('completed_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.primary(['job_id', 'seq']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('job_steps');
  await db.schema.dropTableIfExists('jobs');
}
