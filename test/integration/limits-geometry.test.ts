import test from 'ava';
import fc from 'fast-check';
import { decodeId } from '../../domain/ids/id-codec';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { otherCallerServedDuring, responsesOf, type BatchRequest } from '../support/batch';
import { assertProblem, create, patch, read, referenceId } from '../support/writes';
import { nestedCollections, wktGeometry, wktSoup } from '../support/wkt';

/**
 * Geometry is bounded before any parser reads it (issue 24 finding 1, DESIGN §13): the issue's
 * nested collections cost the API CPU growing with the square of their depth (N = 2,500 stored
 * after 0.45 s, a $batch of 30 held the event loop 11 s). Now length, vertices and nesting are
 * checked in one linear pass, each a 400 naming the field and its variable, and the WKT grammar
 * itself is linear.
 */

let stack: Stack;
let london: string;
test.before(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  london = await referenceId(stack, 'Market', 'markets', { name: 'Central London' });
});
test.after.always(async () => {
  await stack?.close();
});

const DEPTH = 'nests parentheses more than 8 levels deep, the limit (MAX_GEOMETRY_DEPTH)';

const schemeWith = (...geometries: string[]) => ({
  SchemeName: 'Bounded',
  MarketBoundaries: geometries.map((Geometry) => ({ Market: { Id: london }, Geometry })),
});

const count = async (table: string, where: Record<string, unknown>) =>
  Number((await stack.knex(table).where(where).count({ n: '*' }))[0]!.n);

test('the issue’s nested geometry (2,500 and 4,900 levels) is a 400 naming the field and MAX_GEOMETRY_DEPTH', async (t) => {
  for (const n of [2_500, 4_900]) {
    const body = { ...schemeWith('POINT(1 1)', nestedCollections(n)), SchemeName: 'Deep' };
    const res = await stack.request('POST', '/Schemes', { body });
    assertProblem(t, res, 400, 'Validation Failed', { errors: [`Scheme.MarketBoundaries[1].Geometry: ${DEPTH}`] });
  }
  const scheme = await create(stack, 'Schemes', { SchemeName: 'Target' });
  const lone = await stack.request('POST', '/SchemeMarketBoundaries', {
    body: { Scheme: { Id: scheme }, Market: { Id: london }, Geometry: nestedCollections(2_500) },
  });
  assertProblem(t, lone, 400, 'Validation Failed', { errors: [`SchemeMarketBoundary.Geometry: ${DEPTH}`] });
  // A JSON Patch value is refused in the API, wherever it puts the geometry.
  const patched = await patch(stack, `/Schemes/${scheme}`, [
    { op: 'add', path: '/MarketBoundaries/-', value: { Market: { Id: london }, Geometry: nestedCollections(2_500) } },
  ]);
  assertProblem(t, patched, 400, 'Validation Failed', {
    errors: [`Scheme.MarketBoundaries.-.Geometry: ${DEPTH} (operation 0)`],
  });
  t.is(await count('schemes', { scheme_name: 'Deep' }), 0);
  t.is(await count('scheme_market_boundaries', { scheme_id: decodeId('Scheme', scheme)! }), 0);
});

test('the command worker holds geometry to the same limits (a command queued under other settings)', async (t) => {
  // The API lets depth 3 through (8); a worker configured with MAX_GEOMETRY_DEPTH=2 refuses it.
  const strict = await startStack({
    workers: [(config) => startCommandWorker({ ...config, limits: { ...config.limits, maxGeometryDepth: 2 } })],
  });
  try {
    const market = await referenceId(strict, 'Market', 'markets', { name: 'Central London' });
    const res = await strict.request('POST', '/Schemes', {
      body: {
        SchemeName: 'Strict',
        MarketBoundaries: [{ Market: { Id: market }, Geometry: 'MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))' }],
      },
    });
    assertProblem(t, res, 400, 'Validation Failed', {
      errors: [
        'Scheme.MarketBoundaries[0].Geometry: nests parentheses more than 2 levels deep, the limit (MAX_GEOMETRY_DEPTH)',
      ],
    });
    const polygon = {
      SchemeName: 'Strict',
      MarketBoundaries: [{ Market: { Id: market }, Geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))' }],
    };
    t.is((await strict.request('POST', '/Schemes', { body: polygon })).status, 201);
  } finally {
    await strict.close();
  }
});

test('length and vertices past their limits are 400s naming MAX_GEOMETRY_LENGTH and MAX_GEOMETRY_VERTICES', async (t) => {
  const long = `POINT(1 ${'1'.repeat(500_000)})`;
  assertProblem(t, await stack.request('POST', '/Schemes', { body: schemeWith(long) }), 400, 'Validation Failed', {
    errors: [
      'Scheme.MarketBoundaries[0].Geometry: is 500009 characters long, more than the limit of 500000 (MAX_GEOMETRY_LENGTH)',
    ],
  });
  const line = (n: number) => `LINESTRING(${Array(n).fill('1 1').join(',')})`;
  assertProblem(
    t,
    await stack.request('POST', '/Schemes', { body: schemeWith(line(50_001)) }),
    400,
    'Validation Failed',
    {
      errors: ['Scheme.MarketBoundaries[0].Geometry: has more than 50000 vertices, the limit (MAX_GEOMETRY_VERTICES)'],
    },
  );
  t.is((await stack.request('POST', '/Schemes', { body: schemeWith(line(50_000)) })).status, 201);
});

test('real-world WKT is stored as sent: POLYGON, MULTIPOLYGON, a small GEOMETRYCOLLECTION, EMPTY', async (t) => {
  const ring = Array.from({ length: 2_000 }, (_, i) => {
    const a = (i / 2_000) * 2 * Math.PI;
    return `${(-0.1278 + 0.05 * Math.cos(a)).toFixed(6)} ${(51.5074 + 0.03 * Math.sin(a)).toFixed(6)}`;
  });
  const geometries = [
    `POLYGON((${[...ring, ring[0]].join(', ')}))`,
    'MULTIPOLYGON(((0 0, 10 0, 10 10, 0 0), (1 1, 2 1, 2 2, 1 1)), ((20 20, 21 20, 21 21, 20 20)))',
    'GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1), GEOMETRYCOLLECTION(POLYGON((0 0, 1 0, 1 1, 0 0))))',
    'POLYGON EMPTY',
    'SRID=4326;POINT Z (1 2 3)',
  ];
  const id = await create(stack, 'Schemes', schemeWith(...geometries));
  const doc = await read<{ MarketBoundaries: { Geometry: string }[] }>(stack, `/Schemes/${id}`);
  t.deepEqual(
    doc.MarketBoundaries.map((b) => b.Geometry),
    geometries,
  );
});

test('a $batch of 30 such POSTs answers each 400 naming the limit, and another caller is served meanwhile', async (t) => {
  const requests: BatchRequest[] = Array.from({ length: 30 }, (_, i) => ({
    id: `g${i}`,
    method: 'POST',
    url: 'Schemes',
    body: schemeWith(nestedCollections(i % 2 ? 4_900 : 2_500)),
  }));
  const hostile = otherCallerServedDuring(t, stack, requests);
  const responses = responsesOf(await hostile, requests);
  for (const r of responses) {
    t.is(r.status, 400, r.id);
    t.deepEqual((r.body as { extensions: { errors: string[] } }).extensions.errors, [
      `Scheme.MarketBoundaries[0].Geometry: ${DEPTH}`,
    ]);
  }
});

const hostileGeometry = fc.oneof(
  wktGeometry.map((g) => g.text),
  wktSoup,
  fc.string({ maxLength: 40 }),
  fc.integer({ min: 0, max: 3_000 }).map(nestedCollections),
  fc
    .tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom('POINT(1 1)', 'POLYGON((0 0,1 0,1 1,0 0))', ''))
    .map(([n, inner]) => `${'GEOMETRYCOLLECTION('.repeat(n)}${inner}${')'.repeat(n)}`),
  fc
    .tuple(fc.integer({ min: 49_990, max: 50_010 }), fc.constantFrom('1 1', '-1.5e3 2', 'x y'))
    .map(([n, c]) => `MULTIPOINT(${Array(n).fill(c).join(',')})`),
  fc.integer({ min: 499_990, max: 500_010 }).map((n) => `POINT(1 ${'2'.repeat(n - 9)})`),
);

test('property: any geometry text answers 201 or a 400 naming the field, never a 5xx', async (t) => {
  await fc.assert(
    fc.asyncProperty(hostileGeometry, async (geometry) => {
      const res = await stack.request('POST', '/Schemes', { body: schemeWith(geometry) });
      if (res.status === 201) return true;
      if (res.status !== 400) return false;
      const errors = (res.body as { extensions?: { errors?: string[] } }).extensions?.errors ?? [];
      return errors.length > 0 && errors.every((e) => e.startsWith('Scheme.MarketBoundaries[0].Geometry: '));
    }),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 150), seed: 20261126 },
  );
  t.pass();
});
