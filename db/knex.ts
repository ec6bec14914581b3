import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import path from 'node:path';
import { PipelinedPgDialect } from './pipelined-pg';

// pg returns bigint (int8) and numeric as strings; our keys are int4 and counts fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
// Dates stay ISO strings (YYYY-MM-DD): turning them into JS Dates would shift them by time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

/** Where knex's own warnings go (pool acquire failures, …): the process's JSON log, not bare stderr. */
export interface KnexLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export function createKnex(
  databaseUrl: string,
  poolMax = 10,
  logger?: KnexLog,
  options: {
    acquireTimeoutMs?: number;
    /** Connections that pipeline, BEGIN sent with the first statement (db/pipelined-pg.ts): the command worker's. */
    pipelined?: boolean;
  } = {},
): Knex {
  const text = (message: unknown) => (message instanceof Error ? message.message : String(message));
  return knexFactory({
    ...(logger && {
      log: {
        warn: (m: unknown) => logger.warn({ source: 'knex' }, text(m)),
        error: (m: unknown) => logger.error({ source: 'knex' }, text(m)),
        deprecate: (m: unknown) => logger.debug({ source: 'knex' }, text(m)),
        debug: (m: unknown) => logger.debug({ source: 'knex' }, text(m)),
      },
    }),
    client: options.pipelined ? (PipelinedPgDialect as unknown as typeof Knex.Client) : 'pg',
    connection: databaseUrl,
    pool: { min: 0, max: poolMax },
    // A pool that stays exhausted answers 503 after this long (DESIGN §13), not after knex's 60 s.
    acquireConnectionTimeout: options.acquireTimeoutMs ?? 5000,
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.js'], tableName: 'knex_migrations' },
  });
}
