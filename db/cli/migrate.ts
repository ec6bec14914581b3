import { createKnex } from '../knex';
import { migrateAndSeed } from '../migrate';
import { readVariables } from '../../infra/config/environment';

async function main(): Promise<void> {
  const { DATABASE_URL: url } = readVariables(['DATABASE_URL']);
  const knex = createKnex(url, 2);
  try {
    const applied = await migrateAndSeed(knex);
    console.error(
      `[migrate] ${applied.length ? `applied ${applied.join(', ')}` : 'schema up to date'}; reference data loaded`,
    );
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error('[migrate] failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
