import test from 'ava';
import fc from 'fast-check';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeId, encodeId, parseKey, zeroPoint } from '../../domain/ids/id-codec';
import { ENTITIES } from '../../domain/entities';

interface Vectors {
  vectors: { type: string; zeroPoint: number; ids: Record<string, string> }[];
}

// The published vectors live in the shared spec folder beside the repository; a copy is kept in
// test/fixtures for clones without it, and must not drift from the original.
const sharedPath = path.resolve(__dirname, '../../../../shared/spec/id-vectors.json');
const fixturePath = path.resolve(__dirname, '../../../test/fixtures/id-vectors.json');
const vectorsPath = existsSync(sharedPath) ? sharedPath : fixturePath;
const { vectors } = JSON.parse(readFileSync(vectorsPath, 'utf8')) as Vectors;

test('the fixture copy equals the published vectors', (t) => {
  if (!existsSync(sharedPath)) return t.pass('shared/spec not beside this clone');
  t.deepEqual(JSON.parse(readFileSync(fixturePath, 'utf8')), JSON.parse(readFileSync(sharedPath, 'utf8')));
});
const TYPES = vectors.map((v) => v.type);
const dbId = fc.integer({ min: 1, max: 2147483647 });

test('covers every entity type of the spec', (t) => {
  for (const entity of ENTITIES) t.true(TYPES.includes(entity.name), entity.name);
});

for (const v of vectors) {
  test(`vectors: ${v.type}`, (t) => {
    t.is(zeroPoint(v.type), v.zeroPoint);
    for (const [id, encoded] of Object.entries(v.ids)) {
      t.is(encodeId(v.type, Number(id)), encoded, `encode ${id}`);
      t.is(decodeId(v.type, encoded), Number(id), `decode ${encoded}`);
      t.is(decodeId(v.type, `${encoded}==`), Number(id), `decode padded ${encoded}==`);
    }
  });
}

test('property 1: deterministic, 6 characters, round-trips', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...TYPES), dbId, (type, id) => {
      const a = encodeId(type, id);
      return a === encodeId(type, id) && a.length === 6 && decodeId(type, a) === id;
    }),
  );
  t.pass();
});

test('property 2: distinct integers give distinct Ids within a type', (t) => {
  fc.assert(
    fc.property(
      fc.constantFrom(...TYPES),
      dbId,
      dbId,
      (type, a, b) => a === b || encodeId(type, a) !== encodeId(type, b),
    ),
  );
  t.pass();
});

test('property 3 and 5: one integer under two types gives two Ids, decoding across types gives another integer', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...TYPES), fc.constantFrom(...TYPES), dbId, (a, b, id) => {
      if (a === b) return true;
      return encodeId(a, id) !== encodeId(b, id) && decodeId(b, encodeId(a, id)) !== id;
    }),
  );
  t.pass();
});

test('property 4: URL-safe alphabet', (t) => {
  fc.assert(fc.property(fc.constantFrom(...TYPES), dbId, (type, id) => /^[A-Za-z0-9_-]{6}$/.test(encodeId(type, id))));
  t.pass();
});

test('non-canonical keys decode to nothing', (t) => {
  const good = encodeId('Scheme', 42);
  t.is(good, 'h1am9g');
  for (const bad of [
    '',
    'h1am9',
    'h1am9gx',
    ' h1am9g',
    'h1am9g ',
    'h1am9g=',
    'h1am9g===',
    'h1am9h',
    'h1a+9g',
    'h1am9g==x',
  ]) {
    t.is(decodeId('Scheme', bad), null, JSON.stringify(bad));
  }
});

test('bare integers are keys only on the routes that accept them', (t) => {
  t.is(parseKey('Scheme', '42', true), 42);
  t.is(parseKey('Scheme', 'h1am9g', true), 42);
  t.is(parseKey('Company', '42', false), null);
  t.is(parseKey('Scheme', '0', true), null);
  t.is(parseKey('Scheme', '042', true), null);
  t.is(parseKey('Scheme', '99999999999', true), null);
});
