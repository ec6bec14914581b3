import test from 'ava';
import { Scheme } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { parseReadOptions } from '../../domain/queries/read-options';
import { DEFAULT_READ_LIMITS } from '../../domain/queries/read-limits';
import { countStatement, keyedSql, listStatements } from '../../db/query/entity-reader';
import { exportSql } from '../../db/query/entity-export';
import { planCount, planDocument, planRead } from '../../db/query/read-plan';
import { entitySource, resolvePath } from '../../domain/queries/path-resolver';
import { SqlBuilder } from '../../db/query/sql-builder';
import { walkPath } from '../../db/search/search-paths';

// Parse → plan → SQL (issue 11 step 5): every client error of a read is raised by the plan, before
// any SQL is built; the builders number parameters so no caller joins parameter arrays by hand.

const plan = (query: Record<string, string>) => planRead(Scheme, parseReadOptions(query, 1000));
const placeholders = (sql: string) => (sql.match(/\?/g) ?? []).length;

function rejectedWith(t: import('ava').ExecutionContext, fn: () => unknown, message: string): void {
  const err = t.throws(fn);
  t.true(err instanceof DomainError, String(err));
  t.is(err?.message, message);
}

test('the plan raises every name and type error of $filter, $orderby and $expand (the 400s tests pin)', (t) => {
  rejectedWith(t, () => plan({ $filter: 'Nope eq 1' }), `$filter: unknown property 'Nope' of Scheme at position 0`);
  rejectedWith(t, () => plan({ $filter: "TotalUnits eq 'x'" }), `$filter: expected a number, found 'x' at position 14`);
  rejectedWith(
    t,
    () => plan({ $filter: 'SchemeName/X eq 1' }),
    `$filter: 'SchemeName' has no properties at position 0`,
  );
  rejectedWith(
    t,
    () => plan({ $filter: `Companies/Company eq 'x'` }),
    `$filter: 'Companies' is a collection: use Companies/any(...) or Companies/all(...) at position 0`,
  );
  rejectedWith(
    t,
    () => plan({ $orderby: 'Companies' }),
    `$orderby: cannot order by the collection 'Companies' at position 0`,
  );
  rejectedWith(t, () => plan({ $expand: 'Nope' }), `$expand: unknown relation 'Nope' of Scheme at position 0`);
  rejectedWith(
    t,
    () => plan({ $expand: 'Address($top=1)' }),
    `$expand: 'Address' is a single related entity: only $expand applies inside its parentheses at position 0`,
  );
  rejectedWith(
    t,
    () => plan({ $expand: 'Companies($filter=Nope eq 1)' }),
    `$expand: unknown property 'Nope' of SchemeCompany at position 18`,
  );
  rejectedWith(
    t,
    () => plan({ $filter: 'constructor eq 1' }),
    `$filter: unknown property 'constructor' of Scheme at position 0`,
  );
});

test('a count plans only what selects rows: a bad $orderby or $expand does not concern it', (t) => {
  const options = parseReadOptions({ $orderby: 'Companies', $expand: 'Nope', $filter: 'TotalUnits gt 3' }, 1000);
  const statement = countStatement(planCount(Scheme, options), DEFAULT_READ_LIMITS);
  t.regex(statement.sql, /^select count\(\*\)::int as n from \(select 1 from schemes r .* limit \?::int8\) c$/);
  t.deepEqual(statement.params, [3, 10_001]);
  t.is(statement.limit, 10_000);
});

test('a whole set is counted from its table counts, exactly (no limit); anything narrowing it counts rows', (t) => {
  const whole = countStatement(
    planCount(Scheme, parseReadOptions({ $orderby: 'SchemeName' }, 1000)),
    DEFAULT_READ_LIMITS,
  );
  t.regex(whole.sql, /from table_counts where table_name = \?$/);
  t.deepEqual(whole.params, ['schemes']);
  t.is(whole.limit, undefined);
  const filtered = countStatement(planCount(Scheme, parseReadOptions({ $filter: 'TotalUnits gt 3' }, 1000)), {
    countLimit: 50,
    searchCountLimit: 7,
  });
  t.is(filtered.limit, 50);
  t.regex(filtered.sql, /^select count\(\*\)::int as n from \(select 1 from schemes r .* limit \?::int8\) c$/);
  t.notRegex(filtered.sql, /order by/);
  // A search stops at its own limit, in key order (the planner may walk the keys and stop).
  const searched = countStatement(planCount(Scheme, parseReadOptions({ $search: 'park' }, 1000)), {
    countLimit: 50,
    searchCountLimit: 7,
  });
  t.is(searched.limit, 7);
  t.regex(searched.sql, / order by r\.id limit \?::int8\) c$/);
  t.deepEqual(searched.params.slice(-1), [8]);
  const plan = planCount(Scheme, parseReadOptions({}, 1000));
  plan.within = { column: 'market_id', id: 7 };
  t.is(
    countStatement(plan, { countLimit: 10, searchCountLimit: 3 }).limit,
    10,
    'a navigation collection is a narrowed set',
  );
});

test('paths resolve once, through relations, to the definitions (own properties only)', (t) => {
  const resolved = resolvePath(entitySource(Scheme), ['Address', 'Country', 'Name']);
  t.deepEqual(
    resolved.steps.map((s) => [s.kind, s.name]),
    [
      ['relation', 'Address'],
      ['relation', 'Country'],
      ['field', 'Name'],
    ],
  );
  t.is(resolved.failure, undefined);
  t.deepEqual(resolvePath(entitySource(Scheme), ['toString']).failure?.reason, 'unknown');
  t.deepEqual(resolvePath(entitySource(Scheme), ['TotalUnits', 'X']).failure?.reason, 'scalar');
  // Search paths use the same resolver, with their own rules (collections mid-path allowed).
  t.deepEqual(
    walkPath(Scheme, 'Companies/Company/Name').map((s) => s.kind),
    ['collection', 'relation', 'text'],
  );
  t.throws(() => walkPath(Scheme, 'Companies/__proto__'), { message: /'__proto__' is not a usable property/ });
});

test('parameters are bound in text order, whatever order the fragments were built in', (t) => {
  const builder = new SqlBuilder();
  const later = builder.param('second', 'text');
  const earlier = builder.param(1);
  const search = builder.embed('x = ? and y = any(?::text[])', ['third', ['fourth']]);
  const statement = builder.statement(`select ${earlier}, ${later} where ${search}`);
  t.is(statement.sql, `select ?, ?::text where x = ? and y = any(?::text[])`);
  t.deepEqual(statement.params, [1, 'second', 'third', ['fourth']]);
});

test('the page and its count share one compiled WHERE, each bound in its own text order', (t) => {
  const read = plan({
    $filter: `SchemeName eq 'a' and Companies/any(c: c/Company/Name eq 'b')`,
    $search: 'tower',
    $expand: 'Companies($filter=PercentageShare gt 5)',
    $top: '7',
    $skip: '2',
    $count: 'true',
  });
  const { page, count } = listStatements(read, {}, DEFAULT_READ_LIMITS);
  t.truthy(count);
  t.is(placeholders(page.sql), page.params.length);
  t.is(placeholders(count!.sql), count!.params.length);
  // The document precedes the page in the text: its parameter (5) comes first, then the page size
  // where the aggregate cuts the extra row off and says whether there is a next page (7, three
  // uses), then the search's probe (its query, one past the rank window: 1001), then the filter's;
  // the page selects one row past $top (8) after $skip (2). The entity type is written into the
  // search's text (a definition name, so the planner matches its partial index), not bound.
  t.deepEqual(page.params.slice(0, 8), [5, 7, 7, 7, '(tower:*)', 1001, 'a', 'b']);
  t.deepEqual(page.params.slice(-2), [8, 2]);
  t.deepEqual(count!.params, ['(tower:*)', 'a', 'b', 1001]);
  // The count's WHERE is the page's, text for text (the count then stops one row past COUNT_LIMIT).
  const where = count!.sql.slice(
    count!.sql.indexOf(' from schemes r'),
    count!.sql.search(/( order by r\.id)? limit \?::int8\) c$/),
  );
  t.true(page.sql.includes(where), count!.sql);
  t.deepEqual(count!.params.slice(-1), [1001], 'a searched count stops at SEARCH_COUNT_LIMIT');
});

test('a text function compared with a computed value binds each use of it (placeholders = parameters)', (t) => {
  for (const fn of ['startswith', 'endswith', 'contains']) {
    const { page } = listStatements(plan({ $filter: `${fn}(SchemeName, tolower('AB'))` }));
    t.is(placeholders(page.sql), page.params.length, fn);
    t.true(page.params.includes('AB'), fn);
  }
});

test('exports and keyed reads bind every parameter they write; the plain keyed statement is one key', (t) => {
  for (const format of ['csv', 'ndjson'] as const) {
    const statement = exportSql(plan({ $filter: `TotalUnits ge 10`, $search: 'tower' }), format);
    t.is(placeholders(statement.sql), statement.params.length, format);
  }
  const plain = keyedSql(Scheme, 42);
  t.deepEqual(plain.params, [42]);
  t.is(keyedSql(Scheme, 43).sql, plain.sql);
  const expand = parseReadOptions({ $expand: 'Companies($top=3)' }, 1000).expand;
  const expanded = keyedSql(Scheme, 42, { expand });
  t.is(placeholders(expanded.sql), expanded.params.length);
  t.deepEqual(expanded.params, [3, 42]);
  t.is(planDocument(entitySource(Scheme), []).collections.size, 0);
});

test('a count joins what its filter needs, not what only the ordering needs', (t) => {
  const ordered = listStatements(plan({ $orderby: 'Address/City', $count: 'true' }), {}, DEFAULT_READ_LIMITS);
  t.regex(ordered.page.sql, /left join addresses/);
  t.notRegex(ordered.count!.sql, /left join/);
  const filtered = listStatements(plan({ $filter: `Address/City eq 'x'`, $count: 'true' }), {}, DEFAULT_READ_LIMITS);
  t.regex(filtered.count!.sql, /left join addresses \w+ on \w+\.id = r\.address_id where \w+\.city = \?::text/);
  t.deepEqual(filtered.count!.params, ['x', 10_001]);
});
