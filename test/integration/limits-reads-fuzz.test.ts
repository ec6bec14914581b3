import test from 'ava';
import fc from 'fast-check';
import type { HttpResult, Stack } from '../support/stack';
import { enc, type ReadFixture } from '../support/fixtures';
import { onReadSuite } from '../support/read-suite';

/**
 * Property suite over every read input (DESIGN §13): generated valid and mutated `$filter`,
 * `$orderby`, `$expand`, `$search`, `$top`, `$skip`, `$select` and keys against a seeded stack.
 * Whatever the input: never a 5xx; every 4xx a problem+json; no stack trace, SQL, file path or
 * library name in the body; the service still ready afterwards.
 */

let stack: Stack;
let fx: ReadFixture;
onReadSuite(test, (suite) => ({ stack, fx } = suite));

// ---- valid option texts for Schemes

const quoted = (s: string) => `'${s.replaceAll("'", "''")}'`;
const stringLiteral = fc
  .oneof(fc.constantFrom('London', 'a', '', 'Alpha', "O'Brien", '100%', '_', 'ü', '😀'), fc.string({ maxLength: 8 }))
  .map(quoted);
const intLiteral = fc
  .oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(2147483647, -2147483648, 2147483648, 1e300, 1e20))
  .map((n) => String(n));
const numberLiteral = fc.oneof(
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).map(String),
  fc.constantFrom('1e300', '0.5'),
);
const dateLiteral = fc.constantFrom('2024-03-31', '2022-01-15', '0001-01-01', '9999-12-31', '2024-02-29');
const datetimeLiteral = fc.constantFrom('2024-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59Z');

const STRING_PATHS = ['SchemeName', 'Address/City', 'Address/AddressLine', 'Address/Postcode', 'Address/Country/Name'];
const comparisonOp = fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le');

const atom: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom(...STRING_PATHS), comparisonOp, stringLiteral).map((p) => p.join(' ')),
  fc.tuple(fc.constantFrom('TotalUnits'), comparisonOp, intLiteral).map((p) => p.join(' ')),
  fc.tuple(fc.constantFrom('TotalFloorArea'), comparisonOp, numberLiteral).map((p) => p.join(' ')),
  fc.tuple(fc.constantFrom('CompletionDate'), comparisonOp, dateLiteral).map((p) => p.join(' ')),
  fc.tuple(fc.constantFrom('CreatedAt', 'UpdatedAt'), comparisonOp, datetimeLiteral).map((p) => p.join(' ')),
  fc
    .tuple(fc.constantFrom('contains', 'startswith', 'endswith'), fc.constantFrom(...STRING_PATHS), stringLiteral)
    .map(([f, p, v]) => `${f}(${p},${v})`),
  fc.tuple(fc.constantFrom(...STRING_PATHS), stringLiteral).map(([p, v]) => `tolower(${p}) eq ${v}`),
  fc.tuple(fc.constantFrom(...STRING_PATHS), intLiteral).map(([p, v]) => `length(${p}) gt ${v}`),
  fc.tuple(fc.constantFrom('year', 'month', 'day'), intLiteral).map(([f, v]) => `${f}(CompletionDate) eq ${v}`),
  fc.constantFrom('TotalUnits eq null', 'Address ne null', 'Address/Country eq null', 'true', 'false'),
  fc
    .tuple(fc.constantFrom('Id', 'Address/Id', 'Market/Id'), fc.constantFrom('eq', 'gt', 'le'))
    .map(([p, op]) => `${p} ${op} '${enc('Scheme', 1)}'`),
  fc.array(intLiteral, { minLength: 1, maxLength: 4 }).map((xs) => `TotalUnits in (${xs.join(',')})`),
  fc.tuple(fc.constantFrom('any', 'all'), stringLiteral).map(([op, v]) => `Companies/${op}(c: c/Company/Name eq ${v})`),
  fc
    .tuple(fc.constantFrom('any', 'all'), numberLiteral)
    .map(([op, v]) => `Companies/${op}(c: c/PercentageShare ge ${v})`),
  fc.constant('Developments/any()'),
);

const filterText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc.tuple(tie('expr'), fc.constantFrom('and', 'or'), tie('expr')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
    tie('expr').map((e) => `not (${e})`),
  ),
})).expr as fc.Arbitrary<string>;

const orderbyText = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'SchemeName',
        'TotalUnits',
        'CompletionDate',
        'Address/City',
        'Address/Country/Name',
        'Id',
        'CreatedAt',
      ),
      fc.constantFrom('', ' asc', ' desc'),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((items) => items.map(([p, d]) => `${p}${d}`).join(','));

const expandText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom('Address', 'Address/Country', 'Market', 'Notes', 'Tags', 'Developments', 'Companies/Company'),
      fc.constantFrom('Developments/Scheme/Developments', 'Developments/Scheme/Developments/Scheme'),
      fc
        .tuple(fc.nat({ max: 150 }), fc.nat({ max: 5 }), intLiteral)
        .map(([top, skip, v]) => `Developments($top=${top};$skip=${skip};$orderby=Name desc;$filter=Units gt ${v})`),
      fc
        .nat({ max: 120 })
        .map((top) => `Companies($expand=Company($expand=Country);$top=${top};$orderby=PercentageShare)`),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((items) => items.join(','));

const searchWord = fc.oneof(
  fc.constantFrom(
    'alpha',
    'tower',
    'lo',
    'l',
    'a*',
    'ab*',
    'to*',
    '"alpha tower"',
    'SchemeName:beta',
    'City:lon*',
    '-beta',
    'OR',
  ),
  fc.string({ minLength: 1, maxLength: 6 }),
);
const searchText = fc.array(searchWord, { minLength: 1, maxLength: 25 }).map((ws) => ws.join(' '));

const countText = fc.oneof(
  { arbitrary: fc.nat({ max: 1000 }).map(String), weight: 6 },
  {
    arbitrary: fc.constantFrom('-1', '1e3', '99999999999999999999', '100000', '100001', '', ' 5', '0x10', 'NaN'),
    weight: 1,
  },
);

// ---- mutations: insert, delete or replace text anywhere

const MUTATION_TEXT = [
  "'",
  '"',
  '(',
  ')',
  ',',
  '/',
  '$',
  '*',
  '-',
  ' ',
  '\u0000',
  '%',
  'é',
  '😀',
  '\t',
  ';',
  '=',
  ':',
  '.',
  '\\',
  '\n',
  '1e300',
  '99999999999999999999',
  '-2147483649',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'eq',
  'and',
  'or',
  'not',
  'any(',
  'all(x:',
  'null',
  '2024-13-45',
  '0000-01-01',
  '10000-01-01',
  'OR',
  '$expand=',
  'Address/',
  'Companies/',
  'Id gt ',
  "'Zz'",
  '(((((',
  ')))))',
];
type Mutation = { kind: 'insert' | 'delete' | 'replace'; at: number; length: number; text: string };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('insert', 'delete', 'replace'),
  at: fc.nat(),
  length: fc.nat({ max: 6 }),
  text: fc.oneof(fc.constantFrom(...MUTATION_TEXT), fc.string({ maxLength: 3 })),
});

function mutate(text: string, mutations: Mutation[]): string {
  let out = text;
  for (const m of mutations) {
    const at = out.length === 0 ? 0 : m.at % (out.length + 1);
    if (m.kind === 'insert') out = out.slice(0, at) + m.text + out.slice(at);
    else if (m.kind === 'delete') out = out.slice(0, at) + out.slice(at + m.length);
    else out = out.slice(0, at) + m.text + out.slice(at + m.length);
  }
  return out;
}

const maybeMutated = (valid: fc.Arbitrary<string>) =>
  fc.oneof(
    { arbitrary: valid, weight: 3 },
    {
      arbitrary: fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([v, ms]) => mutate(v, ms)),
      weight: 3,
    },
  );

/** An option present in about one request of `1 + absent`, so many requests are valid and reach SQL. */
const sometimes = <T>(arb: fc.Arbitrary<T>, absent = 2): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: absent }, { arbitrary: arb, weight: 1 });

const readQuery = fc.record({
  $filter: sometimes(maybeMutated(filterText), 1),
  $orderby: sometimes(maybeMutated(orderbyText)),
  $expand: sometimes(maybeMutated(expandText)),
  $search: sometimes(maybeMutated(searchText), 4),
  $top: sometimes(countText),
  $skip: sometimes(countText),
  $select: sometimes(
    fc.oneof(fc.constantFrom('SchemeName,Id', '*', 'constructor', 'Address/City'), fc.string({ maxLength: 5 })),
    5,
  ),
  $count: sometimes(fc.constantFrom('true', 'true', 'false', 'yes'), 3),
});

/** Lone surrogates cannot be URL-encoded; the fuzz keeps to text a client can send. */
const encodable = (s: string) => {
  try {
    encodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};

const LEAKS = [
  /\bat\s+\S+\s+\(|\bat\s+\S+\.(?:js|ts):\d+/, // stack frames
  /node_modules|\/work\/|dist\/|\.ts:\d+|\.js:\d+/, // file paths
  /\bselect\b[\s\S]*\bfrom\b|\bjson_build_object\b|\bto_tsquery\b|\bcoalesce\(/i, // SQL
  /\bknex\b|\bobjection\b|\bpg-protocol\b|\bnode-postgres\b|\bexpress\b|\bbullmq\b/i, // library names
  /syntax error at or near|invalid input syntax|out of range for type|does not exist\b.*\bcolumn|TypeError|RangeError/,
];

const stats = { requests: 0, ok: 0, clientErrors: 0, byStatus: new Map<number, number>() };

function check(res: HttpResult, what: string): boolean {
  stats.requests++;
  stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
  if (res.status >= 500) throw new Error(`${what} → ${res.status} ${res.text}`);
  if (res.status < 400) {
    stats.ok++;
    return true;
  }
  stats.clientErrors++;
  if (res.headers.get('content-type')?.split(';')[0] !== 'application/problem+json') {
    throw new Error(`${what} → ${res.status} without problem+json: ${res.text}`);
  }
  for (const leak of LEAKS) if (leak.test(res.text)) throw new Error(`${what} → body leaks ${leak}: ${res.text}`);
  return true;
}

/** Mostly Schemes, whose fields the generators know; elsewhere most names are unknown (400s). */
const ROUTES = ['Schemes', 'Schemes', 'Schemes', 'Schemes', 'Schemes', 'Companies', 'Addresses', 'Developments'];

test.serial('generated and mutated read options never cause a 5xx or leak internals', async (t) => {
  const numRuns = 2000;
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...ROUTES), readQuery, async (route, query) => {
      const entries = Object.entries(query).filter(
        (entry): entry is [string, string] => entry[1] !== undefined && encodable(entry[1]),
      );
      const qs = entries.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
      const what = `GET /${route}?${qs}`;
      return check(await stack.get(`/${route}${qs ? `?${qs}` : ''}`), what);
    }),
    { seed: 20261123, numRuns },
  );
  t.log(`options: ${numRuns} runs, ${stats.requests} requests, ${stats.ok} ok, ${stats.clientErrors} 4xx`);
  t.true(stats.ok > numRuns / 10, 'a fair share of the generated reads are valid');
});

test.serial('generated keys (with and without $expand) never cause a 5xx', async (t) => {
  const key = fc.oneof(
    fc.constantFrom(...fx.schemes.map((id) => enc('Scheme', id)), ...fx.schemes.map(String)),
    fc.constantFrom(
      '0',
      '-1',
      '2147483648',
      '99999999999999999999',
      'constructor',
      '__proto__',
      '$count',
      '%00',
      'AAAAAA',
    ),
    fc.string({ minLength: 1, maxLength: 12 }),
  );
  const numRuns = 500;
  const before = stats.requests;
  await fc.assert(
    fc.asyncProperty(key, fc.option(maybeMutated(expandText), { nil: undefined }), async (k, expand) => {
      if (!encodable(k) || (expand !== undefined && !encodable(expand))) return true;
      const qs = expand === undefined ? '' : `?$expand=${encodeURIComponent(expand)}`;
      return check(await stack.get(`/Schemes/${encodeURIComponent(k)}${qs}`), `GET /Schemes/${k}${qs}`);
    }),
    { seed: 20261124, numRuns },
  );
  t.log(`keys: ${numRuns} runs, ${stats.requests - before} requests`);
  t.log(`statuses so far: ${JSON.stringify([...stats.byStatus].sort())}`);
  const ready = await stack.get('/health/ready');
  t.is(ready.status, 200, 'the service is still ready');
});
