import test from 'ava';
import fc from 'fast-check';
import wkx from 'wkx';
import { Scheme, SchemeMarketBoundary } from '../../domain/entities';
import {
  DEFAULT_GEOMETRY_LIMITS,
  geometryLimitBreach,
  geometryLimitErrors,
  geometryLimitErrorsAt,
} from '../../domain/writes/geometry-limits';
import { isWkt, parseWkt } from '../../domain/validation/wkt';
import { nestedCollections as nested, wktGeometry as geometry, wktSoup as soup } from '../support/wkt';

/**
 * The WKT grammar and the geometry limits (DESIGN §13, issue 24 finding 1): linear in the text
 * whatever its shape, never looser than wkx (the validator it replaces), and the limits checked in
 * one pass before it.
 */

function wkxParses(text: string): boolean {
  try {
    wkx.Geometry.parse(text.trim());
    return true;
  } catch {
    return false;
  }
}

test('real-world WKT is accepted, as wkx accepted it', (t) => {
  for (const good of [
    'POINT(1 2)',
    'POINT EMPTY',
    'POINT Z (1 2 3)',
    'POINTM(1 2 3)',
    'POINT ZM (1 2 3 4)',
    'POINT(-0.1278 51.5074)',
    'POINT(1e3 -2.5E-3)',
    'POINT(.5 5.)',
    'LINESTRING(0 0, 1 1, 2 1)',
    'LINESTRING EMPTY',
    'POLYGON((0 0, 1 0, 1 1, 0 0))',
    'POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))',
    'POLYGON EMPTY',
    'MULTIPOINT(1 1, 2 2)',
    'MULTIPOINT((1 1), (2 2))',
    'MULTILINESTRING((0 0, 1 1), (2 2, 3 3))',
    'MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5), (5.2 5.2, 5.3 5.2, 5.3 5.3, 5.2 5.2)))',
    'MULTIPOLYGON EMPTY',
    'GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1), POLYGON((0 0, 1 0, 1 1, 0 0)))',
    'GEOMETRYCOLLECTION(POINT EMPTY, GEOMETRYCOLLECTION(MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))))',
    'GEOMETRYCOLLECTION EMPTY',
    ' SRID=4326;POINT(1 2) ',
    'SRID=27700;MULTIPOLYGON(((530000 180000, 531000 180000, 531000 181000, 530000 180000)))',
  ]) {
    t.true(isWkt(good), good);
    t.true(wkxParses(good), `wkx: ${good}`);
  }
});

test('text wkx let through is refused: junk ordinates, trailing geometry, non-finite numbers', (t) => {
  for (const bad of [
    '',
    'POINT',
    'POINT(1)',
    'POINT(1 2) trailing',
    'POINT(1 2) POINT(3 4)',
    'POINT(1 2))',
    'POINT(abc def)',
    'POINT(1,2 3)',
    'POINT(1 )',
    'POINT(1e999 1)',
    'POINT(NaN 1)',
    'POINT(Infinity 1)',
    'POINT(- 1)',
    'POINT(1e 1)',
    'point(1 2)',
    'CIRCLE(1 2, 3)',
    'POLYGON((0 0, 1 0)',
    'POLYGON(())',
    'POINT Z (1 2)',
    'POINT(1 2 3)',
    'SRID=x;POINT(1 2)',
    'SRID=4326 ;POINT(1 2)',
    'GEOMETRYCOLLECTION(POINT(1 1),)',
    'GEOMETRYCOLLECTION(',
  ]) {
    t.false(isWkt(bad), bad);
  }
});

test('property: generated WKT is accepted by both parsers, and its vertices are counted exactly', (t) => {
  fc.assert(
    fc.property(geometry, ({ text, vertices }) => {
      if (!isWkt(text) || !wkxParses(text)) return false;
      const limits = { ...DEFAULT_GEOMETRY_LIMITS, maxDepth: 1000 };
      const exact = geometryLimitBreach(text, { ...limits, maxVertices: Math.max(vertices, 1) }) === null;
      const oneLess = vertices === 0 || geometryLimitBreach(text, { ...limits, maxVertices: vertices - 1 }) !== null;
      return exact && oneLess;
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('property: whatever it accepts, wkx accepted too (never looser than before)', (t) => {
  fc.assert(
    fc.property(
      fc.oneof(
        soup,
        geometry.map((g) => g.text),
      ),
      (text) => !isWkt(text) || wkxParses(text),
    ),
    { numRuns: 3000 },
  );
  t.pass();
});

/** Work per character at size 8n over work per character at size n: about 1 if linear, 8 if quadratic. */
function growth(make: (n: number) => string, n: number): number {
  const perChar = (text: string) => parseWkt(text).steps / text.length;
  return perChar(make(8 * n)) / perChar(make(n));
}

test('the grammar does linear work on nesting, vertices, members, spaces and junk', (t) => {
  const families: Record<string, (n: number) => string> = {
    'nested collections (the issue)': nested,
    'nested, unclosed': (n) => 'GEOMETRYCOLLECTION('.repeat(n),
    'one polygon of n vertices': (n) =>
      `POLYGON((${Array.from({ length: n }, (_, i) => `${i} ${i}`).join(', ')}, 0 0))`,
    'a collection of n members': (n) => `GEOMETRYCOLLECTION(${Array(n).fill('MULTIPOLYGON EMPTY').join(',')})`,
    'n polygons': (n) => `MULTIPOLYGON(${Array(n).fill('((0 0,1 0,1 1,0 0))').join(',')})`,
    spaces: (n) => `POINT(${' '.repeat(n)}1 1)`,
    'a long number': (n) => `POINT(${'9'.repeat(n)} 1)`,
    'junk after a ring': (n) => `POLYGON((0 0, 1 1${' 1'.repeat(n)}))`,
  };
  for (const [name, make] of Object.entries(families)) {
    const ratio = growth(make, 2_000);
    t.true(ratio < 1.5, `${name}: 8 × the input took ${ratio.toFixed(2)} × the work per character`);
  }
});

test('the limits: length, nesting and vertices, each naming its variable; the issue’s geometry is refused', (t) => {
  const limits = DEFAULT_GEOMETRY_LIMITS;
  t.is(geometryLimitBreach(nested(7), limits), null);
  for (const n of [9, 2_500, 4_900]) {
    t.is(
      geometryLimitBreach(nested(n), limits),
      'nests parentheses more than 8 levels deep, the limit (MAX_GEOMETRY_DEPTH)',
    );
  }
  t.is(
    geometryLimitBreach(`POINT(1 ${'1'.repeat(500_000)})`, limits),
    'is 500009 characters long, more than the limit of 500000 (MAX_GEOMETRY_LENGTH)',
  );
  const vertices = (n: number) => `LINESTRING(${Array(n).fill('1 1').join(',')})`;
  t.is(geometryLimitBreach(vertices(50_000), limits), null);
  t.is(
    geometryLimitBreach(vertices(50_001), limits),
    'has more than 50000 vertices, the limit (MAX_GEOMETRY_VERTICES)',
  );
});

test('limits are reported at the field path of a body, and of a JSON Patch value wherever it puts geometry', (t) => {
  const deep = nested(20);
  const breach = 'nests parentheses more than 8 levels deep, the limit (MAX_GEOMETRY_DEPTH)';
  const limits = DEFAULT_GEOMETRY_LIMITS;
  t.deepEqual(geometryLimitErrors(SchemeMarketBoundary, { Geometry: deep }, limits), [
    `SchemeMarketBoundary.Geometry: ${breach}`,
  ]);
  t.deepEqual(
    geometryLimitErrors(Scheme, { MarketBoundaries: [{ Geometry: 'POINT(1 1)' }, { Geometry: deep }] }, limits),
    [`Scheme.MarketBoundaries[1].Geometry: ${breach}`],
  );
  // Not geometry, or not where geometry goes: left to the schema.
  t.deepEqual(geometryLimitErrors(Scheme, { SchemeName: deep, MarketBoundaries: 'x' }, limits), []);
  t.deepEqual(geometryLimitErrorsAt(Scheme, ['MarketBoundaries', '0', 'Geometry'], deep, limits), [
    `Scheme.MarketBoundaries[0].Geometry: ${breach}`,
  ]);
  t.deepEqual(geometryLimitErrorsAt(Scheme, ['MarketBoundaries', '-'], { Geometry: deep }, limits), [
    `Scheme.MarketBoundaries.-.Geometry: ${breach}`,
  ]);
  t.deepEqual(geometryLimitErrorsAt(Scheme, ['MarketBoundaries'], [{ Geometry: deep }], limits), [
    `Scheme.MarketBoundaries[0].Geometry: ${breach}`,
  ]);
  t.deepEqual(geometryLimitErrorsAt(Scheme, [], { MarketBoundaries: [{ Geometry: deep }] }, limits), [
    `Scheme.MarketBoundaries[0].Geometry: ${breach}`,
  ]);
  t.deepEqual(geometryLimitErrorsAt(SchemeMarketBoundary, ['Geometry'], deep, limits), [
    `SchemeMarketBoundary.Geometry: ${breach}`,
  ]);
  t.deepEqual(geometryLimitErrorsAt(Scheme, ['SchemeName'], deep, limits), []);
  t.deepEqual(geometryLimitErrorsAt(Scheme, ['constructor'], deep, limits), []);
});
