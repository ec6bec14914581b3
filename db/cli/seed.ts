import { createKnex } from '../knex';
import { migrateAndSeed } from '../migrate';
import { generateData } from '../seeds/generated-data.seed';
import { rebuildAllDocuments } from '../search/search-indexer';
import { readVariables } from '../../infra/config/environment';

/** `npm run seed -- --schemes N [--seed S] [--skip-search]`: generated data, then its search documents. */
function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} needs a non-negative integer`);
  return n;
}

async function main(): Promise<void> {
  // `npm run seed` (scripts/seed.sh) finds the local stores and sets DATABASE_URL.
  const { DATABASE_URL: url } = readVariables(['DATABASE_URL']);
  const schemes = arg('schemes', 1000);
  const seed = arg('seed', 42);
  const knex = createKnex(url, 4);
  try {
    await migrateAndSeed(knex);
    const started = Date.now();
    // `--schemes 0` only rebuilds the search documents of what is there.
    const counts =
      schemes === 0
        ? {}
        : ((await generateData(knex, {
            schemes,
            seed,
            onProgress: (table, rows) =>
              console.error(`[seed] ${table}: ${rows} rows (${((Date.now() - started) / 1000).toFixed(1)} s)`),
          })) ?? {});
    const loaded = Date.now();
    let last = 0;
    // `--skip-search` leaves the search read model to a later `POST /Jobs/RebuildViews`.
    const skipSearch = process.argv.includes('--skip-search');
    const { documents } = skipSearch
      ? { documents: 0 }
      : await rebuildAllDocuments(knex, async ({ entity, done, total }) => {
          if (Date.now() - last > 2000) {
            last = Date.now();
            console.error(`[seed] search documents: ${entity} ${done}/${total}`);
          }
        });
    // Fresh statistics and visibility map, so plans and index-only scans are right from the start.
    await knex.raw('vacuum analyze');
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.error(
      `[seed] ${total} rows in ${((loaded - started) / 1000).toFixed(1)} s, ${documents} search documents in ${((Date.now() - loaded) / 1000).toFixed(1)} s`,
    );
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`[seed] failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
