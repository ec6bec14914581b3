import type { Knex } from 'knex';

/**
 * `startswith(...)` compiles to `LIKE 'prefix%'`. Under the C collation (what `npm start`, `npm test`
 * and docker-compose create) the ordinary btree indexes serve it as a range scan, in either sort
 * direction. Under any other collation they cannot, so this adds `text_pattern_ops` indexes for the
 * fields lists are commonly filtered by prefix.
 */
const PREFIX_INDEXED: [string, string][] = [
  ['schemes', 'scheme_name'],
  ['companies', 'name'],
  ['addresses', 'postcode'],
  ['addresses', 'address_line'],
  ['developments', 'name'],
  ['portfolios', 'name'],
];

async function collationIsC(knex: Knex): Promise<boolean> {
  const { rows } = await knex.raw<{ rows: { collate: string }[] }>(
    `select datcollate as collate from pg_database where datname = current_database()`,
  );
  return ['C', 'POSIX'].includes(rows[0]?.collate ?? '');
}

export async function up(knex: Knex): Promise<void> {
  if (await collationIsC(knex)) return;
  for (const [table, column] of PREFIX_INDEXED) {
    await knex.raw(`create index ?? on ?? (?? text_pattern_ops)`, [`${table}_${column}_prefix`, table, column]);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, column] of PREFIX_INDEXED)
    await knex.raw('drop index if exists ??', [`${table}_${column}_prefix`]);
}
