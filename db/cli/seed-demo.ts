import { createKnex } from '../knex';
import { DEMO_DATA, loadDemoDataIfNoSchemes } from '../seeds/demo-data.seed';
import { encodeId } from '../../domain/ids/id-codec';
import { readVariables } from '../../infra/config/environment';

/**
 * Run by `npm start` after the migration: a database without schemes gets the demo data set
 * (db/seeds/demo-data.seed.ts), unless SEED_DEMO=false; a database with schemes is never touched.
 * Says which of the three happened.
 */
async function main(): Promise<void> {
  const { DATABASE_URL: url, SEED_DEMO: seedDemo, PORT: port } = readVariables(['DATABASE_URL', 'SEED_DEMO', 'PORT']);
  if (!seedDemo) {
    console.error('[seed] SEED_DEMO=false: no demo data');
    return;
  }
  const knex = createKnex(url, 2);
  try {
    const started = Date.now();
    const outcome = await loadDemoDataIfNoSchemes(knex, () =>
      console.error(
        `[seed] the database has no schemes: loading the demo data set (${DEMO_DATA.schemes} schemes with their addresses, companies, notes and tags; SEED_DEMO=false skips this)…`,
      ),
    );
    if (!outcome.loaded) {
      console.error(`[seed] the database has ${outcome.schemes} schemes: no demo data loaded`);
      return;
    }
    console.error(
      `[seed] demo data loaded: ${outcome.rows} rows and ${outcome.documents} search documents in ${((Date.now() - started) / 1000).toFixed(1)} s; try curl -s localhost:${port}/Schemes/${encodeId('Scheme', outcome.firstSchemeKey)}`,
    );
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`[seed] demo data failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
