// Users, their memberships (role per organization), invitations, and keys that belong to a user.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.text('email').notNullable();
    t.text('name');
    /** The instance administrator (the ADMIN_API_KEY) is a user too, so it has an identity. */
    t.boolean('is_instance_admin').notNullable().defaultTo(false);
    t.timestamps(true, true);
  });
  await db.raw('create unique index users_email_unique on users (lower(email))');
  // One administrator, however many processes start at once on the same database.
  await db.raw('create unique index users_one_instance_admin on users (is_instance_admin) where is_instance_admin');

  await db.schema.createTable('user_organizations', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.smallint('role').notNullable();
    t.specificType('scopes', 'text[]');
    t.timestamps(true, true);
    t.unique(['user_id', 'organization_id']);
    t.index(['organization_id']);
  });

  await db.schema.createTable('invitations', (t) => {
    t.uuid('id').primary().defaultTo(db.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.smallint('role').notNullable();
    t.specificType('scopes', 'text[]');
    t.boolean('used').notNullable().defaultTo(false);
    t.timestamps(true, true);
    t.index(['organization_id']);
  });
  await db.raw('create index invitations_email on invitations (lower(email)) where not used');

  await db.schema.alterTable('api_keys', (t) => {
    t.uuid('user_id').references('users.id').onDelete('CASCADE');
    t.index(['user_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('api_keys', (t) => t.dropColumn('user_id'));
  for (const table of ['invitations', 'user_organizations', 'users']) await db.schema.dropTableIfExists(table);
}
