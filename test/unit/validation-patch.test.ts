import test from 'ava';
import fc from 'fast-check';
import type { PatchOperation } from '../../domain/commands/command';
import { Company, Scheme } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { applyPatch, parsePatch, readOnlyReason } from '../../domain/writes/json-patch';
import { assertStorableJson } from '../../domain/json/storable-json';

/** JSON Patch rules (spec §4.3, DESIGN §6, §10): shape checks, read-only paths, application. */

function failureOf(fn: () => unknown): { kind: string; errors: string[] } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { kind: err.kind, errors: err.errors };
  }
}

const scheme = () => ({
  Id: 'h1am3Q',
  SchemeName: 'Doc',
  Address: null,
  BuildingType: { Id: 'bt0001' },
  Notes: [
    { Id: 'n1', Text: 'one' },
    { Id: 'n2', Text: 'two' },
  ],
  Tags: [],
});

test('a body that is not an array is a Bad Request with the spec’s wording', (t) => {
  for (const body of [{}, 'ops', 1, null, undefined]) {
    t.deepEqual(
      failureOf(() => parsePatch(Scheme, body)),
      { kind: 'BadRequest', errors: ['JSON Patch must be an array.'] },
    );
  }
  t.deepEqual(parsePatch(Scheme, []), []);
});

test('malformed operations are listed together as a validation failure', (t) => {
  t.deepEqual(
    failureOf(() =>
      parsePatch(Company, [
        null,
        { path: '/Name', value: 1 },
        { op: 'add', path: '/Name~2', value: 1 },
        { op: 'copy', path: '/Name', from: 'Name' },
        { op: 'test', path: '/Name' },
      ]),
    ),
    {
      kind: 'Validation',
      errors: [
        'Company: operation 0 must be an object',
        'Company.Name: operation 1 has unknown op null',
        'Company: operation 2 (add) has an invalid path',
        "Company.Name: operation 3 (copy) needs a valid 'from' pointer",
        'Company.Name: operation 4 (test) needs a value',
      ],
    },
  );
  // Members RFC 6902 does not define are ignored; only what an op needs is kept.
  t.deepEqual(parsePatch(Company, [{ op: 'remove', path: '/Website', value: 'ignored', note: 'x' }]), [
    { op: 'remove', path: '/Website' },
  ]);
});

test('read-only paths: own Id and timestamps, item Ids and back-references, fields of related entities', (t) => {
  const cases: [string, string | null][] = [
    ['/Id', 'is read-only'],
    ['/CreatedAt', 'is read-only'],
    ['/UpdatedAt', 'is read-only'],
    ['/Developments', 'is read-only'],
    ['/Developments/0/Name', 'is read-only'],
    ['/Companies/0/Id', 'is read-only'],
    ['/Companies/0/Scheme/Id', 'is read-only'],
    ['/Companies/0/UpdatedAt', 'is read-only'],
    ['/Companies/0/Company/Name', 'is read-only'],
    ['/Address/AddressLine', 'is read-only'],
    ['/Notes/0/Id', 'is read-only'],
    ['', null],
    ['/SchemeName', null],
    ['/Address', null],
    ['/Address/Id', null],
    ['/Companies/-', null],
    ['/Companies/0/Company/Id', null],
    ['/Companies/0/PercentageShare', null],
    ['/Notes/0/Text', null],
    ['/Unknown', null],
  ];
  for (const [path, reason] of cases) t.is(readOnlyReason(Scheme, path), reason, path);
  t.deepEqual(
    failureOf(() => parsePatch(Scheme, [{ op: 'move', from: '/Id', path: '/SchemeName' }])),
    { kind: 'Validation', errors: ['Scheme.Id: is read-only'] },
  );
  // `test` only reads, and `copy` only reads its `from`.
  t.is(
    parsePatch(Scheme, [
      { op: 'test', path: '/Id', value: 'h1am3Q' },
      { op: 'copy', from: '/Id', path: '/SchemeName' },
    ]).length,
    2,
  );
});

test('operations apply in order to a copy; the given document is left alone', (t) => {
  const doc = scheme();
  const ops: PatchOperation[] = [
    { op: 'replace', path: '/SchemeName', value: 'Renamed' },
    { op: 'add', path: '/Notes/-', value: { Text: 'three' } },
    { op: 'move', from: '/Notes/0', path: '/Notes/-' },
    { op: 'copy', from: '/Notes/0', path: '/Notes/0' },
    { op: 'remove', path: '/Notes/1' },
    { op: 'test', path: '/Notes/0/Text', value: 'two' },
  ];
  const out = applyPatch(Scheme, doc, ops) as ReturnType<typeof scheme>;
  t.is(out.SchemeName, 'Renamed');
  t.deepEqual(
    out.Notes.map((n) => n.Text),
    ['two', 'three', 'one'],
  );
  t.deepEqual(doc, scheme());
});

test('a nested relation Id sets a null relation as a whole', (t) => {
  for (const op of ['add', 'replace'] as const) {
    const out = applyPatch(Scheme, scheme(), [{ op, path: '/Address/Id', value: 'addr01' }]) as Record<string, unknown>;
    t.deepEqual(out.Address, { Id: 'addr01' }, op);
  }
  const set = applyPatch(Scheme, scheme(), [{ op: 'replace', path: '/BuildingType/Id', value: 'bt0002' }]);
  t.deepEqual((set as Record<string, unknown>).BuildingType, { Id: 'bt0002' });
});

test('operations that do not fit the document are conflicts', (t) => {
  const conflicts: [PatchOperation, string][] = [
    [{ op: 'test', path: '/SchemeName', value: 'Other' }, 'Scheme.SchemeName: test failed (operation 0)'],
    [{ op: 'remove', path: '/Notes/2' }, 'Scheme.Notes[2]: does not exist (operation 0, remove)'],
    [{ op: 'replace', path: '/Missing', value: 1 }, 'Scheme.Missing: does not exist (operation 0, replace)'],
    [{ op: 'add', path: '/Notes/3', value: {} }, 'Scheme.Notes[3]: does not exist (operation 0, add)'],
    [{ op: 'add', path: '/Nothing/Here', value: 1 }, 'Scheme.Nothing.Here: does not exist (operation 0, add)'],
    [
      { op: 'replace', path: '/Notes/01/Text', value: 'x' },
      'Scheme.Notes.01.Text: does not exist (operation 0, replace)',
    ],
    [{ op: 'copy', from: '/Notes/9', path: '/Notes/-' }, 'Scheme.Notes[9]: does not exist (operation 0, copy from)'],
  ];
  for (const [op, message] of conflicts) {
    t.deepEqual(
      failureOf(() => applyPatch(Scheme, scheme(), [op])),
      { kind: 'Conflict', errors: [message] },
      op.path,
    );
  }
});

test('property: appended notes keep their order, and a replace is seen by a following test', (t) => {
  fc.assert(
    fc.property(fc.array(fc.string(), { maxLength: 20 }), fc.string(), (texts, name) => {
      const ops: PatchOperation[] = [
        ...texts.map((text): PatchOperation => ({ op: 'add', path: '/Notes/-', value: { Text: text } })),
        { op: 'replace', path: '/SchemeName', value: name },
        { op: 'test', path: '/SchemeName', value: name },
      ];
      const out = applyPatch(Scheme, scheme(), parsePatch(Scheme, ops)) as ReturnType<typeof scheme>;
      return JSON.stringify(out.Notes.slice(2).map((n) => n.Text)) === JSON.stringify(texts) && out.SchemeName === name;
    }),
  );
  t.pass();
});

/** Path segments that count how often they are printed (`String(segment)`), for the walk's cost. */
function countedSegments(length: number): { segments: string[]; prints: () => number } {
  let prints = 0;
  const segment = {
    toString() {
      prints += 1;
      return 'a';
    },
  };
  return { segments: Array<string>(length).fill(segment as unknown as string), prints: () => prints };
}

test('a long path over a large value costs their sum, not their product (it held the event loop, then the heap)', (t) => {
  // ~8 KB of path and ~8 KB of array: every array item used to copy and print the whole path.
  const path = '/Notes'.concat('/a'.repeat(4000));
  const value = Array<number>(4000).fill(0);
  t.deepEqual(parsePatch(Scheme, [{ op: 'test', path, value }]), [{ op: 'test', path, value }]);
  // The walk prints the client's path once, whatever the value holds: 4,000 prints, not 4,001 × 4,000.
  const fine = countedSegments(4000);
  assertStorableJson('Scheme', value, fine.segments);
  t.is(fine.prints(), 4000);
  const bad = countedSegments(4000);
  const errors = failureOf(() => assertStorableJson('Scheme', Array<number>(4000).fill(Infinity), bad.segments));
  t.is(errors!.errors.length, 20, 'at most MAX_ERRORS places named');
  t.is(bad.prints(), 4000);
  const named = failureOf(() => parsePatch(Scheme, [{ op: 'add', path: '/Name/x', value: [0, 'a\u0000'] }]));
  t.regex(named!.errors.join('\n'), /^Scheme\.Name\.x\[1\]: .*U\+0000/);
});
