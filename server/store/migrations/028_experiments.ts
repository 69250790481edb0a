// A/B experiments of a dataset (two treatments, the control and t1, with the share of users each
// gets) and the record of which treatment each user was put in. The assignments carry the user id
// and the treatment name, so that analytics of a user's events can be split by treatment by joining
// on the user id (as the reference's experiment_user_assignments are). Deleting an experiment or its
// dataset deletes its assignments.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('experiments', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('area').notNullable();
    t.text('control_name').notNullable();
    t.double('control_split').notNullable();
    t.text('t1_name').notNullable();
    t.double('t1_split').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    // A dataset's experiments are listed oldest first.
    t.index(['dataset_id', 'created_at']);
  });
  await db.raw(
    `alter table experiments
       add constraint experiments_splits check (control_split between 0 and 1 and t1_split between 0 and 1),
       add constraint experiments_treatments check (control_name <> t1_name)`,
  );
  await db.schema.createTable('experiment_user_assignments', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('experiment_id').notNullable().references('experiments.id').onDelete('CASCADE');
    t.uuid('dataset_id').notNullable().references('datasets.id').onDelete('CASCADE');
    t.text('user_id').notNullable();
    t.text('treatment_name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
    // One treatment per user and experiment.
    t.unique(['experiment_id', 'user_id']);
    // Analytics join a dataset's events to assignments by user id.
    t.index(['dataset_id', 'user_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('experiment_user_assignments');
  await db.schema.dropTableIfExists('experiments');
}
