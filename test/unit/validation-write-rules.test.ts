import test from 'ava';
import fc from 'fast-check';
import { Company, Scheme, SchemeCompany } from '../../domain/entities';
import { changedFields } from '../../domain/writes/changed-fields';
import { idempotentCommandId, requestHash, stableStringify } from '../../domain/writes/command-ids';
import { ifMatchAccepts } from '../../domain/writes/entity-version';
import { planOwnedCollection, type ColumnValues } from '../../domain/writes/owned-collection-plan';
import { blockingReferrersOf, owningParentsOf } from '../../domain/writes/ownership';

/** The pure rules behind a write's outcome: owned-collection plans, changed fields, ids, ETags. */

const existing = [
  { id: 1, position: 0, values: { text: 'a' } },
  { id: 2, position: 1, values: { text: 'b' } },
  { id: 3, position: 2, values: { text: 'c' } },
];

test('owned items with an existing child’s Id are updated in place, others inserted, the rest deleted', (t) => {
  const plan = planOwnedCollection(existing, [
    { id: 3, values: { text: 'c' } },
    { id: null, values: { text: 'new' } },
    { id: 1, values: { text: 'a, edited' } },
    { id: 99, values: { text: 'foreign id' } },
  ]);
  t.deepEqual(plan, {
    updates: [
      { id: 3, position: 0, values: { text: 'c' } },
      { id: 1, position: 2, values: { text: 'a, edited' } },
    ],
    inserts: [
      { position: 1, values: { text: 'new' } },
      { position: 3, values: { text: 'foreign id' } },
    ],
    deletes: [2],
  });
});

test('an unchanged collection plans nothing; a repeated Id is a new child', (t) => {
  t.deepEqual(
    planOwnedCollection(
      existing,
      existing.map((c) => ({ id: c.id, values: c.values })),
    ),
    { inserts: [], updates: [], deletes: [] },
  );
  const copied = planOwnedCollection(existing.slice(0, 1), [
    { id: 1, values: { text: 'a' } },
    { id: 1, values: { text: 'a' } },
  ]);
  t.deepEqual(copied, { inserts: [{ position: 1, values: { text: 'a' } }], updates: [], deletes: [] });
});

test('property: a plan applied to the existing children gives exactly the desired list', (t) => {
  const child = fc.record({
    id: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
    values: fc.record({ text: fc.string() }),
  });
  fc.assert(
    fc.property(fc.array(child, { maxLength: 8 }), (desired) => {
      const plan = planOwnedCollection(existing, desired);
      const rows = new Map<number, { id: number; position: number; values: ColumnValues }>(
        existing.map((c) => [c.id, { ...c }]),
      );
      for (const id of plan.deletes) rows.delete(id);
      for (const u of plan.updates) rows.set(u.id, { id: u.id, position: u.position, values: u.values });
      let next = 100;
      for (const i of plan.inserts) rows.set(next, { id: next++, position: i.position, values: i.values });
      const result = [...rows.values()].sort((a, b) => a.position - b.position).map((r) => r.values.text);
      return JSON.stringify(result) === JSON.stringify(desired.map((d) => d.values.text));
    }),
  );
  t.pass();
});

test('changed fields: member names in definition order; on create, those written with a value', (t) => {
  const before = { scheme_name: 'A', total_units: 1, completion_date: null, address_id: 4, market_id: null };
  const after = { scheme_name: 'B', total_units: 1, completion_date: '2024-01-01', address_id: null, market_id: null };
  t.deepEqual(changedFields(Scheme, before, after, ['Notes']), ['SchemeName', 'CompletionDate', 'Address', 'Notes']);
  t.deepEqual(changedFields(Scheme, null, after, []), ['SchemeName', 'TotalUnits', 'CompletionDate']);
  t.deepEqual(changedFields(Company, { name: 'x' }, { name: 'x' }, []), []);
});

test('ownership is derived from the definitions', (t) => {
  t.deepEqual(
    owningParentsOf(SchemeCompany).map((o) => [o.parent.name, o.collection, o.relation, o.column]),
    [['Scheme', 'Companies', 'Scheme', 'scheme_id']],
  );
  t.deepEqual(owningParentsOf(Scheme), []);
  // A Scheme's owned rows go with it; everything else that points at it blocks its delete.
  t.deepEqual(
    blockingReferrersOf(Scheme).map((r) => `${r.entity.name}.${r.relation}`),
    ['Development.Scheme', 'InvestmentEvent.Scheme', 'OccupierEvent.Scheme'],
  );
  t.true(blockingReferrersOf(Company).some((r) => r.entity.name === 'SchemeCompany'));
});

test('command ids from an Idempotency-Key are deterministic per caller and key', (t) => {
  const id = idempotentCommandId('alice', 'k1');
  t.regex(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.is(idempotentCommandId('alice', 'k1'), id);
  t.not(idempotentCommandId('bob', 'k1'), id);
  t.not(idempotentCommandId('alice', 'k2'), id);
});

test('request hashes ignore member order but nothing else', (t) => {
  t.is(stableStringify({ b: [1, { d: 1, c: 2 }], a: null }), '{"a":null,"b":[1,{"c":2,"d":1}]}');
  t.is(requestHash('POST', 'Schemes', { a: 1, b: 2 }), requestHash('POST', 'Schemes', { b: 2, a: 1 }));
  t.not(requestHash('POST', 'Schemes', { a: 1 }), requestHash('POST', 'Companies', { a: 1 }));
  t.not(requestHash('POST', 'Schemes', { a: [1, 2] }), requestHash('POST', 'Schemes', { a: [2, 1] }));
});

test('If-Match accepts the current ETag, a list holding it, or *', (t) => {
  t.true(ifMatchAccepts('"3"', 3));
  t.true(ifMatchAccepts('"1", "3"', 3));
  t.true(ifMatchAccepts('*', 3));
  t.false(ifMatchAccepts('"2"', 3));
  t.false(ifMatchAccepts('3', 3));
});
