import test from 'ava';
import { mergeOperationsOf, rootBodyOf } from '../../api/odata/odata-write-body';
import { entityByName } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { encodeId } from '../../domain/ids/id-codec';

/**
 * An OData write body in the root's form (api/odata/odata-write-body.ts): binds in every URL form
 * become `{Id}`, control information is dropped, a PATCH object becomes the JSON Patch `add`s of the
 * same change. test/integration/odata-writes.test.ts drives the same through the real stack.
 */

const Scheme = entityByName('Scheme');
const a = encodeId('Address', 7);
const c = encodeId('Company', 3);

const errorsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err.errors;
    throw err;
  }
  return [];
};

test('every entity URL form of a bind names the same key; anything else is refused', (t) => {
  const forms = [
    `Addresses('${a}')`,
    `Addresses(Id='${a}')`,
    `Addresses/${a}`,
    `/odata/Addresses('${a}')`,
    `http://localhost:3000/odata/Addresses('${a}')`,
    `https://proxy.example/odata/Addresses/${a}`,
    `Addresses('${encodeURIComponent(a)}')`,
  ];
  for (const form of forms) {
    t.deepEqual(rootBodyOf(Scheme, { SchemeName: 'x', 'Address@odata.bind': form }), {
      SchemeName: 'x',
      Address: { Id: a },
    });
  }
  // A batch's Content-ID reference stays a reference, as the root's `{Id: "$1"}`.
  t.deepEqual(rootBodyOf(Scheme, { 'Address@odata.bind': '$1' }), { Address: { Id: '$1' } });
  for (const bad of [`Companies('${c}')`, 'Addresses', `/other/Addresses('${a}')`, `Addresses('${a}')/Country`]) {
    t.deepEqual(
      errorsOf(() => rootBodyOf(Scheme, { 'Address@odata.bind': bad })),
      ["Scheme.Address@odata.bind: must name an entity of Addresses, as Addresses('<Id>')"],
      bad,
    );
  }
});

test('control information and annotations are dropped; @odata.type must name the type; items are read alike', (t) => {
  t.deepEqual(
    rootBodyOf(Scheme, {
      '@odata.context': 'x',
      '@odata.type': '#EntityManagement.Scheme',
      'SchemeName@odata.type': '#String',
      SchemeName: 'x',
      Address: { '@odata.id': `Addresses('${a}')` },
      Companies: [
        { '@odata.type': '#EntityManagement.SchemeCompany', 'Company@odata.bind': `Companies/${c}`, Role: 'r' },
      ],
      Notes: [{ '@odata.type': 'EntityManagement.Note', Text: 'n' }],
    }),
    { SchemeName: 'x', Address: { Id: a }, Companies: [{ Company: { Id: c }, Role: 'r' }], Notes: [{ Text: 'n' }] },
  );
  t.deepEqual(
    errorsOf(() =>
      rootBodyOf(Scheme, { '@odata.type': '#EntityManagement.Company', Notes: [{ '@odata.type': '#X.Note' }] }),
    ),
    [
      'Scheme.@odata.type: must be #EntityManagement.Scheme',
      'Scheme.Notes[0].@odata.type: must be #EntityManagement.Note',
    ],
  );
});

test('a PATCH object is the JSON Patch `add` of each member it names, in its order', (t) => {
  const key = 42;
  t.deepEqual(
    mergeOperationsOf(
      Scheme,
      {
        SchemeName: 'x',
        'Address@odata.bind': null,
        TotalUnits: null,
        Tags: [{ Name: 't' }],
        Id: encodeId('Scheme', key),
        UpdatedAt: 'ignored',
      },
      key,
    ),
    [
      { op: 'add', path: '/SchemeName', value: 'x' },
      { op: 'add', path: '/Address', value: null },
      { op: 'add', path: '/TotalUnits', value: null },
      { op: 'add', path: '/Tags', value: [{ Name: 't' }] },
    ],
  );
  t.deepEqual(
    errorsOf(() => mergeOperationsOf(Scheme, { Nope: 1, __proto__x: 2 }, key)),
    ['Scheme.Nope: is not a known field', 'Scheme.__proto__x: is not a known field'],
  );
  t.deepEqual(
    errorsOf(() => mergeOperationsOf(Scheme, JSON.parse('{"__proto__": {"SchemeName": "x"}}'), key)),
    ['Scheme.__proto__: is not a known field'],
  );
  t.deepEqual(
    errorsOf(() => mergeOperationsOf(Scheme, { Id: encodeId('Scheme', 1) }, key)),
    ['Scheme.Id: does not match the key in the URL'],
  );
  t.deepEqual(
    errorsOf(() => mergeOperationsOf(Scheme, [], key)),
    ['Scheme: must be a JSON object'],
  );
  // A body of many bad binds answers a bounded list of messages.
  const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`N${i}@odata.bind`, 'x']));
  t.is(errorsOf(() => mergeOperationsOf(Scheme, many, key)).length, 20);
});
