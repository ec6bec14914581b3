import { createKnex } from '../knex';
import { migrateAndSeed } from '../migrate';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set');
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
