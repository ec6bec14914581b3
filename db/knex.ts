import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import path from 'node:path';

// pg returns bigint (int8) and numeric as strings; our keys are int4 and counts fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
// Dates stay ISO strings (YYYY-MM-DD): turning them into JS Dates would shift them by time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

export function createKnex(databaseUrl: string, poolMax = 10): Knex {
  return knexFactory({
    client: 'pg',
    connection: databaseUrl,
    pool: { min: 0, max: poolMax },
    // A pool that stays exhausted answers 503 after this long (DESIGN §13), not after knex's 60 s.
    acquireConnectionTimeout: 5000,
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.js'], tableName: 'knex_migrations' },
  });
}
