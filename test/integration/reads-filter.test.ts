import test from 'ava';
import buildQuery from 'odata-query';
import type { Stack } from '../support/stack';
import { enc, type ReadFixture } from '../support/fixtures';
import { onReadSuite } from '../support/read-suite';

let stack: Stack;
let fx: ReadFixture;
onReadSuite(test, (suite) => ({ stack, fx } = suite));

type Doc = Record<string, unknown>;

async function schemeNames(filter: string): Promise<string[]> {
  const res = await stack.get(`/Schemes?$filter=${encodeURIComponent(filter)}`);
  if (res.status !== 200) throw new Error(`${filter}: ${res.status} ${res.text}`);
  return (res.body as Doc[]).map((d) => d.SchemeName as string);
}

const INJECTION = "x'; DROP TABLE schemes;--";

test('comparison operators, and/or/not, parentheses', async (t) => {
  t.deepEqual(await schemeNames(`TotalUnits gt 40`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`TotalUnits ge 40`), ['Alpha Tower', 'Beta Yard']);
  t.deepEqual(await schemeNames(`TotalUnits lt 40`), [INJECTION]);
  t.deepEqual(await schemeNames(`TotalUnits le 40 and TotalUnits ne 0`), ['Beta Yard']);
  t.deepEqual(await schemeNames(`TotalUnits eq 0 or SchemeName eq 'Gamma Works'`), ['Gamma Works', INJECTION]);
  // Gamma Works has no TotalUnits: `TotalUnits gt 0` is false for it (OData), so its negation holds.
  t.deepEqual(await schemeNames(`not (TotalUnits gt 0)`), ['Gamma Works', INJECTION]);
  t.deepEqual(await schemeNames(`TotalFloorArea eq 5000.5`), ['Alpha Tower']);
});

test('null follows OData at the root: ne includes rows without a value, not of a comparison too', async (t) => {
  t.deepEqual(await schemeNames(`TotalUnits ne 0`), ['Alpha Tower', 'Beta Yard', 'Gamma Works']);
  t.deepEqual(await schemeNames(`not (TotalUnits eq 0)`), ['Alpha Tower', 'Beta Yard', 'Gamma Works']);
  t.deepEqual(await schemeNames(`not (TotalUnits in (0, 40))`), ['Alpha Tower', 'Gamma Works']);
  t.deepEqual(await schemeNames(`Address/Id ne null and not (TotalUnits ne 0)`), [INJECTION]);
  t.deepEqual(await schemeNames(`not (TotalUnits ne 0) and not (TotalUnits eq null)`), [INJECTION]);
});

test('null comparisons and in', async (t) => {
  t.deepEqual(await schemeNames(`TotalUnits eq null`), ['Gamma Works']);
  t.deepEqual(await schemeNames(`Address ne null and TotalUnits ne null`), ['Alpha Tower', 'Beta Yard', INJECTION]);
  t.deepEqual(await schemeNames(`Address/Id eq null`), ['Gamma Works']);
  t.deepEqual(await schemeNames(`SchemeName in ('Beta Yard', 'Gamma Works', 'Nope')`), ['Beta Yard', 'Gamma Works']);
});

test('dates compare as dates', async (t) => {
  t.deepEqual(await schemeNames(`CompletionDate ge 2023-01-01`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`year(CompletionDate) eq 2022`), ['Beta Yard']);
  t.deepEqual(await schemeNames(`CreatedAt lt 2999-01-01T00:00:00Z and CompletionDate lt 2030-01-01`), [
    'Alpha Tower',
    'Beta Yard',
  ]);
});

test('string functions are case-sensitive; tolower makes them not; % and _ are plain characters', async (t) => {
  t.deepEqual(await schemeNames(`contains(SchemeName, 'Tower')`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`contains(SchemeName, 'tower')`), []);
  t.deepEqual(await schemeNames(`contains(tolower(SchemeName), 'tower')`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`startswith(SchemeName, 'Beta') or endswith(SchemeName, 'Works')`), [
    'Beta Yard',
    'Gamma Works',
  ]);
  t.deepEqual(await schemeNames(`length(SchemeName) eq 9`), ['Beta Yard']);
  t.deepEqual(await schemeNames(`toupper(Address/City) eq 'LONDON'`), ['Alpha Tower', INJECTION]);
  const companies = await stack.get(
    `/Companies?$filter=${encodeURIComponent(`contains(Name, '100%') or contains(Name, 's_')`)}`,
  );
  t.deepEqual(
    (companies.body as Doc[]).map((d) => d.Name),
    ['Beta 100% Capital_'],
  );
  const underscore = await stack.get(`/Companies?$filter=${encodeURIComponent(`endswith(Name, '_')`)}`);
  t.deepEqual(
    (underscore.body as Doc[]).map((d) => d.Name),
    ['Beta 100% Capital_'],
  );
});

test('navigation paths and any/all over collections', async (t) => {
  t.deepEqual(await schemeNames(`Address/AddressLine eq '1 High Street'`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`Address/Country/IsoCode eq 'IE'`), ['Beta Yard']);
  const acme = enc('Company', fx.companies[0]!);
  t.deepEqual(await schemeNames(`Companies/any(c: c/Company/Id eq '${acme}')`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`Companies/any(c: c/PercentageShare gt 0.9)`), ['Beta Yard']);
  t.deepEqual(await schemeNames(`Companies/any()`), ['Alpha Tower', 'Beta Yard']);
  t.deepEqual(await schemeNames(`Companies/all(c: c/PercentageShare lt 0.6) and Companies/any()`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`Tags/any(x: x/Name eq 'flagship')`), ['Alpha Tower']);
  t.deepEqual(await schemeNames(`Companies/any(c: c/Company/Name eq 'Gamma Partners' and c/Role eq 'Lender')`), [
    'Alpha Tower',
  ]);
});

test("Id eq '<encoded>' selects one row; digits only on the five routes", async (t) => {
  const beta = enc('Scheme', fx.schemes[1]!);
  t.deepEqual(await schemeNames(`Id eq '${beta}'`), ['Beta Yard']);
  t.deepEqual(await schemeNames(`Id eq '${beta}=='`), ['Beta Yard']);
  t.deepEqual(await schemeNames(`Id eq '${fx.schemes[2]}'`), ['Gamma Works']);
  t.deepEqual(await schemeNames(`Id in ('${beta}', '${fx.schemes[0]}')`), ['Alpha Tower', 'Beta Yard']);
  t.deepEqual(await schemeNames(`Id eq 'garbage'`), []);
  t.is((await schemeNames(`Id ne 'garbage'`)).length, 4);
  t.deepEqual(await schemeNames(`Address/Id eq '${enc('Address', fx.addresses[1]!)}'`), ['Beta Yard']);
  const companies = await stack.get(`/Companies?$filter=${encodeURIComponent(`Id eq '${fx.companies[0]}'`)}`);
  t.deepEqual(companies.body, [], 'Companies take only encoded Ids');
  // An Id of another type names another row (or none), never this one.
  t.deepEqual(await schemeNames(`Id eq '${enc('Company', fx.schemes[1]!)}'`), []);
});

test('injection-looking literals are data', async (t) => {
  t.deepEqual(await schemeNames(`SchemeName eq 'x''; DROP TABLE schemes;--'`), [INJECTION]);
  t.deepEqual(await schemeNames(`Address/AddressLine eq '3 O''Brien Way'`), [INJECTION]);
  t.is((await stack.knex('schemes').count<{ count: number }[]>('* as count'))[0]!.count, 4);
});

test('bad filters are 400 problems naming the text and position', async (t) => {
  const cases: [string, RegExp][] = [
    [`SchemeName eqq 'x'`, /unexpected 'eqq' at position 11/],
    [`Nope eq 1`, /unknown property 'Nope' of Scheme at position 0/],
    [`TotalUnits eq 'many'`, /expected a number, found 'many' at position 14/],
    [`SchemeName eq 5`, /expected a quoted string, found 5 at position 14/],
    [`CompletionDate gt 'yesterday'`, /expected a date .* at position 18/],
    [`CompletionDate gt 2024-13-01`, /position 18/],
    [`Companies eq 1`, /collection/],
    [`Address/Nope eq 'x'`, /unknown property 'Nope' of Address/],
    [`frob(SchemeName)`, /frob/],
    [`TotalUnits gt 1e999`, /position 14/],
    [`Id gt 'nope!'`, /'nope!' is not an Id of Scheme/],
    [`SchemeName`, /must be a condition/],
  ];
  for (const [filter, pattern] of cases) {
    const res = await stack.get(`/Schemes?$filter=${encodeURIComponent(filter)}`);
    t.is(res.status, 400, filter);
    t.like(res.body as Doc, { type: 'about:blank', title: 'Bad Request', status: 400 }, filter);
    t.regex((res.body as Doc).detail as string, pattern, filter);
    t.notRegex(res.text, /select|postgres|stack/i);
  }
});

test('query strings produced by the odata-query client library parse and filter', async (t) => {
  const acme = enc('Company', fx.companies[0]!);
  const cases: [Parameters<typeof buildQuery>[0], string[]][] = [
    [{ filter: { SchemeName: 'Beta Yard' } }, ['Beta Yard']],
    [{ filter: { TotalUnits: { gt: 40 } } }, ['Alpha Tower']],
    [{ filter: { or: [{ SchemeName: 'Beta Yard' }, { TotalUnits: { eq: 0 } }] } }, ['Beta Yard', INJECTION]],
    [{ filter: { SchemeName: { contains: 'Gamma' } } }, ['Gamma Works']],
    [{ filter: { SchemeName: { in: ['Alpha Tower', 'Gamma Works'] } } }, ['Alpha Tower', 'Gamma Works']],
    [{ filter: { Companies: { any: { Company: { Id: acme } } } } } as never, ['Alpha Tower']],
    [
      { filter: { 'Address/City': 'Dublin' }, orderBy: 'SchemeName desc', top: 5, skip: 0, count: true } as never,
      ['Beta Yard'],
    ],
  ];
  for (const [query, expected] of cases) {
    const qs = buildQuery(query);
    const res = await stack.get(`/Schemes${qs}`);
    t.is(res.status, 200, qs);
    t.deepEqual(
      (res.body as Doc[]).map((d) => d.SchemeName),
      expected,
      qs,
    );
  }
});
