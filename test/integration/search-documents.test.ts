import test from 'ava';
import fc from 'fast-check';
import type { Knex } from 'knex';
import { Company, Scheme } from '../../domain/entities';
import { encodeId } from '../../domain/ids/id-codec';
import { parseReadOptions } from '../../domain/queries/read-options';
import { fetchPage, listStatements } from '../../db/query/entity-reader';
import { planRead } from '../../db/query/read-plan';
import { searchCondition } from '../../db/query/search-condition';
import { affectedDocuments, rebuildAllDocuments, reindexDocuments } from '../../db/search/search-indexer';
import { databasePerFile } from '../support/database-per-file';
import { makeEvent } from '../support/queues';

/**
 * Issue 27: the whole-entity documents (`$search` naming no field) live in `search_documents`,
 * kept by the search indexer beside the per-field documents; and a page of such a search finds
 * its rank window from the matching documents probed once, with the answer of the key-order
 * window it replaces.
 */

const database = databasePerFile(2);

/** Words by how many of the 120 generated Schemes hold them (row i holds a word when it divides i). */
const WORDS: Record<string, number> = { every: 1, half: 2, tenth: 10, rare: 40, nowhere: 1000 };
const SCHEMES = 120;

/** Keys of the generated Schemes, in key order (the first one's row deleted after indexing). */
let generated: Promise<number[]> | undefined;
function generateSchemes(): Promise<number[]> {
  generated ??= (async () => {
    const knex = database.knex;
    const rows = Array.from({ length: SCHEMES }, (_, n) => {
      const i = n + 1;
      // A word repeated 1–3 times, so ranks differ and tie.
      const words = Object.entries(WORDS)
        .filter(([, every]) => i % every === 0)
        .flatMap(([word]) => Array<string>(1 + ((i * 7) % 3)).fill(word));
      return { scheme_name: `${words.join(' ')} ${i}`, total_units: i % 7 };
    });
    const keys = ((await knex('schemes').insert(rows).returning('id')) as { id: number }[]).map((r) => r.id);
    await reindexDocuments(knex, new Map([[Scheme, keys]]));
    // A document may briefly outlive its row (events reach search asynchronously): the page must
    // skip it as the key-order window did.
    await knex('schemes').where('id', keys[0]).delete();
    await knex.raw('analyze search_documents');
    return keys;
  })();
  return generated;
}

/** The page as the service builds it, with a rank window of `window`. */
async function servicePage(word: string, window: number, top: number, skip: number, minUnits?: number) {
  const options = parseReadOptions({
    $search: word,
    $top: String(top),
    $skip: String(skip),
    ...(minUnits === undefined ? {} : { $filter: `TotalUnits ge ${minUnits}` }),
  });
  const plan = planRead(Scheme, options);
  plan.search = searchCondition(Scheme, options.search!, undefined, window);
  const page = await fetchPage(database.knex, listStatements(plan).page);
  return (JSON.parse(page.json) as { Id: string }[]).map((d) => d.Id);
}

/**
 * The key-order window's answer, computed apart from the compiler: every selected match by key;
 * the first `window` of them by rank (then key), the rest after them by key; then the page.
 */
async function expectedPage(word: string, window: number, top: number, skip: number, minUnits?: number) {
  const { rows } = (await database.knex.raw(
    `select r.id, ts_rank(d.document, to_tsquery('simple', ?)) as rank
     from schemes r join search_documents d on d.entity_type = 'Scheme' and d.entity_key = r.id
     where d.document @@ to_tsquery('simple', ?) and r.total_units >= ?
     order by r.id`,
    [`${word}:*`, `${word}:*`, minUnits ?? -1],
  )) as { rows: { id: number; rank: number }[] };
  const ranked = rows.slice(0, window).sort((a, b) => b.rank - a.rank || a.id - b.id);
  return [...ranked, ...rows.slice(window)].slice(skip, skip + top).map((r) => encodeId('Scheme', r.id));
}

test.serial(
  'fast-check: the page of a search is the key-order window’s, for rare and common words, around the window size',
  async (t) => {
    await generateSchemes();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(WORDS)),
        fc.integer({ min: 1, max: 130 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 130 }),
        fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
        async (word, window, top, skip, minUnits) => {
          const got = await servicePage(word, window, top, skip, minUnits);
          const want = await expectedPage(word, window, top, skip, minUnits);
          t.deepEqual(got, want, `${word} window ${window} $top=${top} $skip=${skip} TotalUnits ge ${minUnits}`);
          return JSON.stringify(got) === JSON.stringify(want);
        },
      ),
      { numRuns: 150, seed: 27 },
    );
    // The boundaries themselves: `tenth` has 12 documents (one of a deleted row), `half` 60.
    for (const [word, window] of [
      ['tenth', 11],
      ['tenth', 12],
      ['tenth', 13],
      ['half', 59],
      ['half', 60],
      ['half', 61],
    ] as const) {
      for (const minUnits of [undefined, 3]) {
        t.deepEqual(
          await servicePage(word, window, 100, 0, minUnits),
          await expectedPage(word, window, 100, 0, minUnits),
          `${word} window ${window} TotalUnits ge ${minUnits}`,
        );
      }
    }
  },
);

/** Whether the page's key-order walk (the second branch of its window) ran, from its plan. */
async function walked(word: string, window: number, minUnits?: number): Promise<boolean> {
  const options = parseReadOptions({
    $search: word,
    ...(minUnits === undefined ? {} : { $filter: `TotalUnits ge ${minUnits}` }),
  });
  const plan = planRead(Scheme, options);
  plan.search = searchCondition(Scheme, options.search!, undefined, window);
  const statement = listStatements(plan).page;
  const { rows } = (await database.knex.raw(
    `explain (analyze, format json) ${statement.sql}`,
    statement.params as Knex.RawBinding[],
  )) as {
    rows: { 'QUERY PLAN': [{ Plan: PlanNode }] }[];
  };
  const cte = find(rows[0]!['QUERY PLAN'][0].Plan, (n) => n['Subplan Name'] === 'CTE w');
  // The CTE's node is its Append: the probed prefix first, the walk second.
  const walk = cte!.Plans![1]!;
  const gated = find(walk, (n) => n['One-Time Filter'] !== undefined)!;
  return gated.Plans!.some((n) => n['Parent Relationship'] === 'Outer' && n['Actual Loops'] > 0);
}

interface PlanNode {
  'Subplan Name'?: string;
  'One-Time Filter'?: string;
  'Parent Relationship'?: string;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

function find(node: PlanNode, match: (n: PlanNode) => boolean): PlanNode | undefined {
  if (match(node)) return node;
  for (const child of node.Plans ?? []) {
    const found = find(child, match);
    if (found) return found;
  }
  return undefined;
}

test.serial('the key order is walked only when a filter leaves the probed matches short of the window', async (t) => {
  await generateSchemes();
  t.false(await walked('rare', 1000), 'a rare word: its matches are all probed');
  t.false(await walked('every', 10), 'a common word: the first matches probed fill the window');
  t.false(await walked('every', 10, 0), 'a filter that keeps every row');
  t.true(await walked('every', 10, 6), 'a filter that keeps one row in seven walks the key order');
});

// ---- upkeep of the whole documents ----------------------------------------------------------------

async function wholeDocument(knex: Knex, type: string, key: number): Promise<string | undefined> {
  const row = (await knex('search_documents').where({ entity_type: type, entity_key: key }).first('document')) as
    { document: string } | undefined;
  return row?.document;
}

test.serial(
  'a renamed Company’s new name reaches the whole documents of its Schemes; the old one leaves',
  async (t) => {
    const knex = database.knex;
    const [company] = (await knex('companies').insert({ name: 'Oldbrook Estates' }).returning('id')) as {
      id: number;
    }[];
    const [scheme] = (await knex('schemes').insert({ scheme_name: 'Harbour Lofts' }).returning('id')) as {
      id: number;
    }[];
    await knex('scheme_companies').insert({ scheme_id: scheme!.id, company_id: company!.id, role: 'Developer' });
    await reindexDocuments(
      knex,
      new Map([
        [Scheme, [scheme!.id]],
        [Company, [company!.id]],
      ]),
    );
    t.regex((await wholeDocument(knex, 'Scheme', scheme!.id))!, /'oldbrook'/);

    await knex('companies').where('id', company!.id).update({ name: 'Newhaven Estates' });
    const renamed = makeEvent('Company', 'Updated', company!.id, { changedFields: ['Name'] });
    await reindexDocuments(knex, await affectedDocuments(knex, [renamed]));
    const document = (await wholeDocument(knex, 'Scheme', scheme!.id))!;
    t.regex(document, /'newhaven'/);
    t.notRegex(document, /'oldbrook'/);
    t.regex((await wholeDocument(knex, 'Company', company!.id))!, /'newhaven'/);
  },
);

test.serial('a deleted row’s whole document goes with its next reindex, or with a full rebuild', async (t) => {
  const knex = database.knex;
  const keys = (
    (await knex('schemes')
      .insert([{ scheme_name: 'Doomed One' }, { scheme_name: 'Doomed Two' }])
      .returning('id')) as {
      id: number;
    }[]
  ).map((r) => r.id);
  await reindexDocuments(knex, new Map([[Scheme, keys]]));
  t.truthy(await wholeDocument(knex, 'Scheme', keys[0]!));
  t.truthy(await wholeDocument(knex, 'Scheme', keys[1]!));

  await knex('schemes').whereIn('id', keys).delete();
  await reindexDocuments(knex, new Map([[Scheme, [keys[0]!]]]));
  t.is(await wholeDocument(knex, 'Scheme', keys[0]!), undefined, 'the event’s reindex');
  t.truthy(await wholeDocument(knex, 'Scheme', keys[1]!), 'not yet: no event reached search');
  await rebuildAllDocuments(knex, async () => {});
  t.is(await wholeDocument(knex, 'Scheme', keys[1]!), undefined, 'the full rebuild');
  const { rows } = (await knex.raw(
    `select count(*)::int as n from search_fields where entity_type = 'Scheme' and entity_key = any(?::int[])`,
    [keys],
  )) as { rows: { n: number }[] };
  t.is(rows[0]!.n, 0, 'and the per-field documents');
});

test.serial('no whole document is left among the per-field ones', async (t) => {
  const { rows } = (await database.knex.raw(`select count(*)::int as n from search_fields where field = '*'`)) as {
    rows: { n: number }[];
  };
  t.is(rows[0]!.n, 0);
});

test.serial('reindexing an unchanged row writes nothing', async (t) => {
  const knex = database.knex;
  const [scheme] = (await knex('schemes').insert({ scheme_name: 'Steady State' }).returning('id')) as { id: number }[];
  await reindexDocuments(knex, new Map([[Scheme, [scheme!.id]]]));
  const stamp = async () =>
    (
      (await knex('search_documents').where({ entity_type: 'Scheme', entity_key: scheme!.id }).first('xmin')) as {
        xmin: string;
      }
    ).xmin;
  const before = await stamp();
  await reindexDocuments(knex, new Map([[Scheme, [scheme!.id]]]));
  t.is(await stamp(), before);
});

test.serial(
  'the migration is reversible: down puts the whole documents back among the per-field ones, up moves them again',
  async (t) => {
    const knex = database.knex;
    const count = async (sql: string) => ((await knex.raw(sql)) as { rows: { n: number }[] }).rows[0]!.n;
    const whole = await count('select count(*)::int as n from search_documents');
    t.true(whole > 0);
    await knex.migrate.down({ name: '20261127100000_search-documents.js' });
    t.is(await count(`select count(*)::int as n from search_fields where field = '*'`), whole);
    t.is(await count(`select count(*)::int as n from pg_class where relname = 'search_documents'`), 0);
    await knex.migrate.up({ name: '20261127100000_search-documents.js' });
    t.is(await count('select count(*)::int as n from search_documents'), whole);
    t.is(await count(`select count(*)::int as n from search_fields where field = '*'`), 0);
  },
);
