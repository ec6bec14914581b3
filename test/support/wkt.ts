import fc from 'fast-check';

/** WKT strings for the geometry tests (test/unit/wkt.test.ts, test/integration/limits-geometry.test.ts). */

/** The issue's hostile geometry: `n` collections nested around one point. */
export const nestedCollections = (n: number) => `${'GEOMETRYCOLLECTION('.repeat(n)}POINT(1 1)${')'.repeat(n)}`;

const ordinate = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
);
const gap = fc.constantFrom('', ' ', '  ');
const dimensions = fc.constantFrom(['', 2], [' Z', 3], ['M', 3], [' ZM ', 4]) as fc.Arbitrary<[string, number]>;

/** A geometry string and its number of vertices, in the canonical syntax both parsers read. */
export interface Generated {
  text: string;
  vertices: number;
}

function coordinatesOf(n: number): fc.Arbitrary<string> {
  return fc.array(ordinate, { minLength: n, maxLength: n }).map((o) => o.join(' '));
}

function listOf<T>(item: fc.Arbitrary<T>, max: number): fc.Arbitrary<T[]> {
  return fc.array(item, { minLength: 1, maxLength: max });
}

function simple(ordinates: number): fc.Arbitrary<{ body: string; vertices: number; type: string }> {
  const c = coordinatesOf(ordinates);
  const line = listOf(c, 6).map((cs) => ({ text: `(${cs.join(',')})`, vertices: cs.length }));
  const rings = listOf(line, 3).map((ls) => ({
    text: `(${ls.map((l) => l.text).join(', ')})`,
    vertices: ls.reduce((n, l) => n + l.vertices, 0),
  }));
  return fc.oneof(
    c.map((body) => ({ type: 'POINT', body: `(${body})`, vertices: 1 })),
    line.map((l) => ({ type: 'LINESTRING', body: l.text, vertices: l.vertices })),
    rings.map((r) => ({ type: 'POLYGON', body: r.text, vertices: r.vertices })),
    listOf(c, 4).map((cs) => ({
      type: 'MULTIPOINT',
      body: `(${cs.map((x) => `(${x})`).join(', ')})`,
      vertices: cs.length,
    })),
    listOf(line, 3).map((ls) => ({
      type: 'MULTILINESTRING',
      body: `(${ls.map((l) => l.text).join(',')})`,
      vertices: ls.reduce((n, l) => n + l.vertices, 0),
    })),
    listOf(rings, 3).map((ps) => ({
      type: 'MULTIPOLYGON',
      body: `(${ps.map((p) => p.text).join(', ')})`,
      vertices: ps.reduce((n, p) => n + p.vertices, 0),
    })),
    fc.constant({ type: 'POLYGON', body: ' EMPTY', vertices: 0 }),
  );
}

/** Valid WKT in the canonical syntax (capitals, spaces) wkx reads too, with its vertex count. */
export const wktGeometry: fc.Arbitrary<Generated> = fc.letrec<{ geometry: Generated }>((tie) => ({
  geometry: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .tuple(dimensions, gap)
      .chain(([[tag, n], space]) =>
        simple(n).map((g) => ({ text: `${g.type}${tag}${space}${g.body}`, vertices: g.vertices })),
      ),
    listOf(tie('geometry'), 3).map((members) => ({
      text: `GEOMETRYCOLLECTION(${members.map((m) => m.text).join(', ')})`,
      vertices: members.reduce((n, m) => n + m.vertices, 0),
    })),
  ),
})).geometry;

/** Token soup: WKT keywords, parentheses, numbers and junk in any order. */
export const wktSoup = fc
  .array(
    fc.constantFrom(
      'POINT',
      'POLYGON',
      'MULTIPOINT',
      'GEOMETRYCOLLECTION',
      'EMPTY',
      'Z',
      '(',
      ')',
      ',',
      ' ',
      '1',
      '-2.5',
      'e',
      'x',
      ';',
    ),
    { maxLength: 40 },
  )
  .map((tokens) => tokens.join(''));
