import type { Knex } from 'knex';
import { seedReferenceData } from './seeds/reference-data.seed';

/** Brings a database to the latest schema and loads reference data. Idempotent. */
export async function migrateAndSeed(knex: Knex): Promise<string[]> {
  // knex's migration lock table keeps concurrent migrators from applying a migration twice.
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  await seedReferenceData(knex);
  return applied;
}
