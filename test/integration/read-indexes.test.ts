import test from 'ava';
import type { Knex } from 'knex';
import { ENTITIES, Scheme } from '../../domain/entities';
import { parseReadOptions } from '../../domain/queries/read-options';
import { DEFAULT_READ_LIMITS } from '../../domain/queries/read-limits';
import { countStatement, listStatements } from '../../db/query/entity-reader';
import { searchableEntities } from '../../db/search/search-paths';
import { planCount, planRead } from '../../db/query/read-plan';
import { databasePerFile } from '../support/database-per-file';

/**
 * Issue 27: the indexes reads rely on exist for what the definitions describe, and the statements
 * the compiler emits can be answered from them (the planner is told to avoid a table scan or a
 * sort, which it then does only when no index serves: the plan shows which one did).
 */

const database = databasePerFile(2);

/** `indexdef` of every index, by name. */
async function indexes(knex: Knex): Promise<Map<string, string>> {
  const { rows } = (await knex.raw(`select indexname, indexdef from pg_indexes where schemaname = 'public'`)) as {
    rows: { indexname: string; indexdef: string }[];
  };
  return new Map(rows.map((r) => [r.indexname, r.indexdef]));
}

/** The plan of a compiled statement, with sequential scans (and, if asked, sorts) priced out. */
async function plan(knex: Knex, statement: { sql: string; params: unknown[] }, { sorts = true } = {}): Promise<string> {
  return knex.transaction(async (trx) => {
    await trx.raw('set local enable_seqscan = off');
    if (!sorts) await trx.raw('set local enable_sort = off');
    const { rows } = (await trx.raw(`explain ${statement.sql}`, statement.params as Knex.RawBinding[])) as {
      rows: { 'QUERY PLAN': string }[];
    };
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

const read = (query: Record<string, string>) => parseReadOptions(query);

/** Enough rows that statistics exist; a few hold the pattern searched for below (once per file). */
let seeded: Promise<void> | undefined;
function seedSchemes(): Promise<void> {
  seeded ??= (async () => {
    await database.knex.raw(
      `insert into schemes (scheme_name, total_units, completion_date)
       select case when g % 100 = 0 then 'Park ' else 'Scheme ' end || g, g % 50, date '2020-01-01' + (g % 400)
       from generate_series(1, 3000) g`,
    );
    // Vacuum also moves the rows from the GIN pending list into the index proper (as autovacuum would).
    await database.knex.raw('vacuum analyze schemes');
  })();
  return seeded;
}

test('every string field an entity offers to $search directly has a trigram index', async (t) => {
  const defs = await indexes(database.knex);
  const trigram = [...defs.values()].filter((d) => d.includes('gin_trgm_ops'));
  for (const entity of ENTITIES) {
    for (const path of Object.values(entity.searchFields)) {
      const field = entity.fields[path];
      if (field?.kind !== 'string') continue;
      const expected = `ON public.${entity.table} USING gin (${field.column} gin_trgm_ops)`;
      t.true(
        trigram.some((d) => d.includes(expected)),
        `${entity.name}.${path}: ${expected}`,
      );
    }
  }
});

test('every searchable entity type has a partial GIN over its whole-entity documents, and nothing else does', async (t) => {
  const defs = [...(await indexes(database.knex)).values()].filter((d) =>
    d.includes('ON public.search_documents USING gin'),
  );
  const expected = searchableEntities(ENTITIES).map(
    ({ entity }) => `USING gin (document) WHERE (entity_type = '${entity.name}'::text)`,
  );
  t.deepEqual(defs.map((d) => d.replace(/^.* USING gin/, 'USING gin')).sort(), expected.sort());
});

test('every orderable field of Schemes has a (column, id) index', async (t) => {
  const defs = [...(await indexes(database.knex)).values()];
  for (const [name, field] of Object.entries(Scheme.fields)) {
    if (field.kind === 'wkt' || field.kind === 'stringList') continue;
    const expected = `ON public.schemes USING btree (${field.column}, id)`;
    t.true(
      defs.some((d) => d.includes(expected)),
      `${name}: ${expected}`,
    );
  }
});

test('contains, startswith and endswith with $count are answered from an index on the text', async (t) => {
  await seedSchemes();
  // The trigram index answers any pattern; under the C collation the btree also answers a prefix
  // (a range scan), which the planner may prefer for startswith.
  const served = {
    contains: /Bitmap Index Scan on schemes_scheme_name_trgm/,
    endswith: /Bitmap Index Scan on schemes_scheme_name_trgm/,
    startswith: /(Bitmap Index Scan on schemes_scheme_name_trgm|Index Cond: \(\(scheme_name >= 'Park 1'::text\))/,
  };
  for (const [fn, expected] of Object.entries(served)) {
    const options = read({ $filter: `${fn}(SchemeName,'Park 1')`, $count: 'true' });
    const count = await plan(database.knex, countStatement(planCount(Scheme, options), DEFAULT_READ_LIMITS));
    t.regex(count, expected, `${fn} count:\n${count}`);
    const page = await plan(database.knex, listStatements(planRead(Scheme, options)).page);
    t.regex(page, expected, `${fn} page:\n${page}`);
  }
});

test('$orderby of every Scheme field, both directions, is read from its index with no sort', async (t) => {
  await seedSchemes();
  for (const [name, field] of Object.entries(Scheme.fields)) {
    for (const direction of ['asc', 'desc'] as const) {
      const options = read({ $orderby: `${name} ${direction}`, $top: '60' });
      const page = await plan(database.knex, listStatements(planRead(Scheme, options)).page, { sorts: false });
      // Index-only when the index holds every column the page reads (the column and the key).
      const scan = `Index (Only )?Scan${direction === 'desc' ? ' Backward' : ''} using schemes_${field.column}_id_index on schemes r`;
      t.regex(page, new RegExp(scan), `${name} ${direction}:\n${page}`);
      t.notRegex(page, /Sort Key: r\./, `${name} ${direction}: no sort of the rows`);
    }
  }
});

test('names in order narrowed by a lookup are walked index-only: the lookup keys are in the name index', async (t) => {
  await seedSchemes();
  for (const lookup of ['BuildingType', 'DevelopmentType', 'DevelopmentStatus', 'Market', 'Country']) {
    const options = read({
      $filter: `contains(SchemeName,'Park') and ${lookup}/Name eq 'x'`,
      $orderby: 'SchemeName',
      $top: '60',
    });
    const page = await plan(database.knex, listStatements(planRead(Scheme, options)).page, { sorts: false });
    // Without the INCLUDE this is an Index Scan: a heap visit for every row walked.
    t.regex(page, /Index Only Scan using schemes_scheme_name_id_index on schemes r/, `${lookup}:\n${page}`);
  }
});
