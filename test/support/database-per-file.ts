import test from 'ava';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { createTestDatabase, type TestDatabase } from './test-database';

/**
 * A cloned, migrated database for one test file, with a knex on it: created before the file's
 * tests and dropped after them. Read `db.current` / `db.knex` inside tests (not at import time).
 */
export function databasePerFile(
  poolMax = 2,
  options: Parameters<typeof createKnex>[3] = {},
): { readonly current: TestDatabase; readonly knex: Knex } {
  let database: TestDatabase | undefined;
  let knex: Knex | undefined;
  test.before(async () => {
    database = await createTestDatabase();
    knex = createKnex(database.url, poolMax, undefined, options);
  });
  test.after.always(async () => {
    await knex?.destroy();
    await database?.drop();
  });
  return {
    get current() {
      if (!database) throw new Error('the test database is created in test.before');
      return database;
    },
    get knex() {
      if (!knex) throw new Error('the test database is created in test.before');
      return knex;
    },
  };
}
