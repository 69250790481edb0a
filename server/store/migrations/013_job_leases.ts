// Leases of the in-process runner's jobs: several services without Temporal may share one database,
// and exactly one of them must run each job. A runner claims a job by setting itself as `owner` with
// a lease it renews while it runs the job; a job whose lease ran out (its owner died) is taken over
// by any runner. Jobs of earlier versions have no owner, so the first runner to look claims them.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('jobs', (t) => {
    /** The runner holding the job: `<host>:<pid>:<random>`; kept after the job ends, as a record. */
    t.text('owner');
    /** Until when the owner holds the job without renewing; null when no one holds it. */
    t.timestamp('lease_expires_at', { useTz: true });
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('jobs', (t) => {
    t.dropColumn('lease_expires_at');
    t.dropColumn('owner');
  });
}
