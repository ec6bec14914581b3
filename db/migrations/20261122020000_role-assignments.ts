import type { Knex } from 'knex';

/**
 * Role grants kept by the service (DESIGN §7): roles a subject holds on top of its token's claim.
 * Subjects are the identity provider's opaque `sub` values, so they are stored as given.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('role_assignments', (t) => {
    t.increments('id').primary();
    t.text('subject').notNullable();
    t.text('role').notNullable();
    t.text('created_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['subject', 'role']);
  });
  await knex.raw(
    `alter table role_assignments add constraint role_assignments_role_known check (role in ('User', 'Admin'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('role_assignments');
}
