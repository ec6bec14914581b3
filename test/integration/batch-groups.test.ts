import test, { type ExecutionContext } from 'ava';
import { encodeId } from '../../domain/ids/id-codec';
import type { DomainEvent } from '../../domain/events/domain-event';
import { startStack, type Stack } from '../support/stack';
import {
  answerOf,
  assertBatchProblem,
  assertFailedDependency,
  batch,
  batchAnswerOf,
  byId,
  countRows,
  createdId,
  createdIds,
  headerOf,
  type BatchRequest,
} from '../support/batch';
import { JSON_PATCH, create, patch, read, waitFor } from '../support/writes';

/**
 * `POST /$batch` (DESIGN §12) as units of work: an atomicity group is all or nothing (its failing
 * request answers its own problem, the others 424 naming it; no row, no event, no activity),
 * requests outside groups run one by one, `dependsOn` on a failure answers 424 without running,
 * `$<id>` references inside a group and across groups, in bodies, PATCH values and `/Address/Id`
 * paths, GETs see the writes before them, and a committed group's entities get their events,
 * activities and search documents like the same writes made one by one.
 *
 * The serial tests look at the whole outbox and activity log: AVA runs them before this file's
 * concurrent tests, so nothing else of this file writes while they do.
 */

type Doc = Record<string, unknown>;

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.close();
});

const ID = /^[A-Za-z0-9_-]{6}$/;
const missingAddress = encodeId('Address', 987_654);

async function eventIds(): Promise<Set<string>> {
  return new Set(await stack.knex('outbox').pluck('event_id'));
}

/**
 * Nothing was committed to the outbox since `before` and no activity was recorded for anything new:
 * a write made after the batch (a sentinel) is the only new event, and once its activity is
 * recorded it is the only new activity.
 */
async function assertNothingPublishedSince(t: ExecutionContext, before: Set<string>, label: string) {
  const sentinel = await create(stack, 'Companies', { Name: `Sentinel after ${label}` });
  const events = (await stack.knex('outbox').select('event_id', 'event')) as { event_id: string; event: DomainEvent }[];
  const added = events.filter((e) => !before.has(e.event_id));
  t.deepEqual(
    added.map((e) => [e.event.name, e.event.entityId]),
    [['CompanyCreated', sentinel]],
    `${label}: no event of the failed group`,
  );
  await waitFor(async () => (await stack.knex('activities').where({ entity_id: sentinel }).first()) !== undefined);
  const activities = (await stack.knex('activities').select('event_id', 'entity_id')) as {
    event_id: string;
    entity_id: string;
  }[];
  t.deepEqual(
    activities.filter((a) => !before.has(a.event_id)).map((a) => a.entity_id),
    [sentinel],
    `${label}: no activity of the failed group`,
  );
}

test.serial(
  'a request failing its checks in the middle of a group: its problem, 424s naming it, nothing written',
  async (t) => {
    const before = await eventIds();
    const requests: BatchRequest[] = [
      { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Group fail A Co' } },
      { id: 'a1', atomicityGroup: 'g', method: 'POST', url: 'Addresses', body: { AddressLine: 'Group fail A line' } },
      { id: 'bad-scheme', atomicityGroup: 'g', method: 'POST', url: 'Schemes', body: { Address: { Id: '$a1' } } },
      {
        id: 's2',
        atomicityGroup: 'g',
        method: 'POST',
        url: 'Schemes',
        body: { SchemeName: 'Group fail A scheme', Companies: [{ Company: { Id: '$c1' }, Role: 'Developer' }] },
      },
    ];
    const r = byId(await batch(stack, requests));
    assertBatchProblem(t, r['bad-scheme'], 400, 'Validation Failed', { errors: ['Scheme.SchemeName: is required'] });
    for (const id of ['c1', 'a1', 's2']) assertFailedDependency(t, r[id], 'bad-scheme');
    t.is(await countRows(stack, 'companies', { name: 'Group fail A Co' }), 0);
    t.is(await countRows(stack, 'addresses', { address_line: 'Group fail A line' }), 0);
    t.is(await countRows(stack, 'schemes', { scheme_name: 'Group fail A scheme' }), 0);
    await assertNothingPublishedSince(t, before, 'group A');
  },
);

test.serial('a request failing in the worker after earlier writes of its group: everything rolled back', async (t) => {
  const existing = await create(stack, 'Companies', { Name: 'Group fail B existing' });
  const before = await eventIds();
  const stale = [{ op: 'replace', path: '/Name', value: 'Group fail B never' }];
  const requests: BatchRequest[] = [
    { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Group fail B Co' } },
    {
      id: 'p1',
      atomicityGroup: 'g',
      method: 'PATCH',
      url: '$c1',
      headers: JSON_PATCH,
      body: [{ op: 'replace', path: '/Name', value: 'Group fail B renamed' }],
    },
    {
      id: 'p2',
      atomicityGroup: 'g',
      method: 'PATCH',
      url: `Companies/${existing}`,
      headers: JSON_PATCH,
      body: [{ op: 'replace', path: '/Website', value: 'https://b.example' }],
    },
    {
      id: 'stale',
      atomicityGroup: 'g',
      method: 'PATCH',
      url: `Companies/${existing}`,
      headers: { ...JSON_PATCH, 'If-Match': '"1"' },
      body: stale,
    },
    {
      id: 's1',
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Schemes',
      body: { SchemeName: 'Group fail B scheme', Companies: [{ Company: { Id: '$c1' }, Role: 'Developer' }] },
    },
  ];
  const responses = await batch(stack, requests);
  const r = byId(responses);
  for (const id of ['c1', 'p1', 'p2', 's1']) assertFailedDependency(t, r[id], 'stale');
  // Inside the group p2 had made the ETag "2": the stale If-Match fails as it would alone after p2.
  t.is(r.stale!.status, 412, JSON.stringify(r.stale));
  t.deepEqual(r.stale!.body, {
    type: 'about:blank',
    title: 'Precondition Failed',
    status: 412,
    detail: `Company '${existing}' has changed: If-Match "1" does not match its ETag "2".`,
  });
  t.is(await countRows(stack, 'companies', { name: 'Group fail B Co' }), 0);
  t.is(await countRows(stack, 'companies', { name: 'Group fail B renamed' }), 0);
  t.is(await countRows(stack, 'schemes', { scheme_name: 'Group fail B scheme' }), 0);
  const after = await stack.get(`/Companies/${existing}`);
  t.is(after.headers.get('etag'), '"1"', 'the existing company is untouched');
  t.like(after.body as Doc, { Name: 'Group fail B existing', Website: null });
  await assertNothingPublishedSince(t, before, 'group B');
});

test.serial('the first or the last request of a group failing in the worker: the same all-or-nothing', async (t) => {
  for (const position of ['first', 'last'] as const) {
    const before = await eventIds();
    const failing: BatchRequest = {
      id: `missing-ref-${position}`,
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Schemes',
      body: { SchemeName: `Group fail ${position} bad`, Address: { Id: missingAddress } },
    };
    const others: BatchRequest[] = [1, 2].map((i) => ({
      id: `ok${i}`,
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Companies',
      body: { Name: `Group fail ${position} ${i}` },
    }));
    const requests = position === 'first' ? [failing, ...others] : [...others, failing];
    const r = byId(await batch(stack, requests));
    assertBatchProblem(t, r[failing.id], 400, 'Validation Failed', {
      errors: [`Scheme.Address.Id: Address '${missingAddress}' does not exist`],
    });
    for (const other of others) assertFailedDependency(t, r[other.id], failing.id);
    for (const i of [1, 2]) t.is(await countRows(stack, 'companies', { name: `Group fail ${position} ${i}` }), 0);
    await assertNothingPublishedSince(t, before, `group failing ${position}`);
  }
});

test('outside groups requests run one by one: a later one runs after an earlier one failed', async (t) => {
  const requests: BatchRequest[] = [
    { id: 'bad', method: 'POST', url: 'Schemes', body: { SchemeName: 'Lone bad', Address: { Id: missingAddress } } },
    { id: 'ok', method: 'POST', url: 'Companies', body: { Name: 'Lone after failure' } },
    { id: 'bad2', method: 'POST', url: 'Companies', body: {} },
    { id: 'ok2', method: 'POST', url: 'Companies', body: { Name: 'Lone after failure 2' } },
    { id: 'list', method: 'GET', url: `Companies?$filter=${encodeURIComponent("startswith(Name,'Lone after')")}` },
  ];
  const r = byId(await batch(stack, requests));
  assertBatchProblem(t, r.bad, 400, 'Validation Failed', {
    errors: [`Scheme.Address.Id: Address '${missingAddress}' does not exist`],
  });
  assertBatchProblem(t, r.bad2, 400, 'Validation Failed', { errors: ['Company.Name: is required'] });
  t.is(r.ok!.status, 201);
  t.is(r.ok2!.status, 201);
  t.deepEqual(
    (r.list!.body as Doc[]).map((d) => [d.Id, d.Name]),
    [
      [createdId(r.ok!), 'Lone after failure'],
      [createdId(r.ok2!), 'Lone after failure 2'],
    ],
  );
  t.is(await countRows(stack, 'schemes', { scheme_name: 'Lone bad' }), 0);
  t.is(await countRows(stack, 'companies', { name: 'Lone after failure' }), 1);
});

test('dependsOn a failed request or group answers 424 without running, transitively; others run', async (t) => {
  const requests: BatchRequest[] = [
    { id: 'bad', method: 'POST', url: 'Companies', body: { Name: '' } },
    { id: 'd1', dependsOn: ['bad'], method: 'POST', url: 'Companies', body: { Name: 'Dep skipped 1' } },
    { id: 'd2', dependsOn: ['d1'], method: 'POST', url: 'Companies', body: { Name: 'Dep skipped 2' } },
    { id: 'ok', method: 'POST', url: 'Companies', body: { Name: 'Dep ran 1' } },
    { id: 'ga', atomicityGroup: 'g1', method: 'POST', url: 'Addresses', body: { AddressLine: 'Dep group line' } },
    {
      id: 'gb',
      atomicityGroup: 'g1',
      method: 'DELETE',
      url: `Companies/${encodeId('Company', 987_654)}`,
    },
    { id: 'd3', dependsOn: ['g1'], method: 'POST', url: 'Companies', body: { Name: 'Dep skipped 3' } },
    { id: 'd4', dependsOn: ['ga'], method: 'POST', url: 'Companies', body: { Name: 'Dep skipped 4' } },
    { id: 'd5', dependsOn: ['ok'], method: 'POST', url: 'Companies', body: { Name: 'Dep ran 2' } },
    { id: 'd6', dependsOn: ['ok', 'bad'], method: 'POST', url: 'Companies', body: { Name: 'Dep skipped 6' } },
    { id: 'd7', dependsOn: ['d5', 'ok'], method: 'GET', url: '$d5' },
  ];
  const r = byId(await batch(stack, requests));
  t.is(r.bad!.status, 400);
  t.is(r.gb!.status, 404);
  assertFailedDependency(t, r.ga, 'gb');
  for (const id of ['d1', 'd2', 'd3', 'd4', 'd6']) assertFailedDependency(t, r[id]);
  t.is(r.ok!.status, 201);
  t.is(r.d5!.status, 201);
  t.is(r.d7!.status, 200);
  t.like(r.d7!.body as Doc, { Id: createdId(r.d5!), Name: 'Dep ran 2' });
  for (const n of [1, 2, 3, 4, 6]) t.is(await countRows(stack, 'companies', { name: `Dep skipped ${n}` }), 0);
  t.is(await countRows(stack, 'addresses', { address_line: 'Dep group line' }), 0);
  for (const n of [1, 2]) t.is(await countRows(stack, 'companies', { name: `Dep ran ${n}` }), 1);
});

test('$<id> references across groups through dependsOn (the request or its group), in POST and PUT bodies', async (t) => {
  const requests: BatchRequest[] = [
    { id: 'a1', atomicityGroup: 'g1', method: 'POST', url: 'Addresses', body: { AddressLine: 'Across 1' } },
    { id: 'c1', atomicityGroup: 'g1', method: 'POST', url: 'Companies', body: { Name: 'Across Co' } },
    {
      id: 's1',
      atomicityGroup: 'g2',
      dependsOn: ['g1'],
      method: 'POST',
      url: 'Schemes',
      body: {
        SchemeName: 'Across scheme',
        Address: { Id: '$a1' },
        Companies: [{ Company: { Id: '$c1' }, Role: 'Lender' }],
      },
    },
    { id: 'a2', atomicityGroup: 'g2', method: 'POST', url: 'Addresses', body: { AddressLine: 'Across 2' } },
    {
      id: 'x1',
      dependsOn: ['c1'],
      method: 'POST',
      url: 'Schemes',
      body: { SchemeName: 'Across via request', Companies: [{ Company: { Id: '$c1' }, Role: 'Investor' }] },
    },
    {
      id: 'put',
      dependsOn: ['s1', 'a2', 'c1'],
      method: 'PUT',
      url: '$s1',
      body: {
        SchemeName: 'Across scheme put',
        Address: { Id: '$a2' },
        Companies: [{ Company: { Id: '$c1' }, Role: 'Investor' }],
      },
    },
    {
      id: 'dev',
      dependsOn: ['g2'],
      method: 'POST',
      url: 'Developments',
      body: { Name: 'Across phase', Scheme: { Id: '$s1' } },
    },
    { id: 'get', dependsOn: ['put', 's1'], method: 'GET', url: '$s1?$expand=Companies' },
  ];
  const r = byId(await batch(stack, requests));
  for (const id of ['a1', 'c1', 's1', 'a2', 'x1', 'dev']) t.is(r[id]!.status, 201, `${id}: ${JSON.stringify(r[id])}`);
  t.is(r.put!.status, 204, JSON.stringify(r.put));
  const [a1, c1, s1, a2] = createdIds(r, ['a1', 'c1', 's1', 'a2']);
  const scheme = r.get!.body as Doc;
  t.like(scheme, { Id: s1, SchemeName: 'Across scheme put', Address: { Id: a2 } });
  t.deepEqual(
    (scheme.Companies as Doc[]).map((c) => [(c.Company as Doc).Id, c.Role]),
    [[c1, 'Investor']],
  );
  t.deepEqual(batchAnswerOf(r.get!), answerOf(await stack.get(`/Schemes/${s1}?$expand=Companies`)));
  t.like(await read(stack, `/Developments/${createdId(r.dev!)}`), { Name: 'Across phase', Scheme: { Id: s1 } });
  const viaRequest = await read(stack, `/Schemes/${createdId(r.x1!)}?$expand=Companies`);
  t.deepEqual(
    (viaRequest.Companies as Doc[]).map((c) => [(c.Company as Doc).Id, c.Role]),
    [[c1, 'Investor']],
  );
  t.not(a1, a2);
});

test('$<id> in PATCH values and in a /Address/Id path, inside a group and after it', async (t) => {
  const requests: BatchRequest[] = [
    { id: 'a1', atomicityGroup: 'g', method: 'POST', url: 'Addresses', body: { AddressLine: 'Patch ref 1' } },
    { id: 'a2', atomicityGroup: 'g', method: 'POST', url: 'Addresses', body: { AddressLine: 'Patch ref 2' } },
    { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Patch ref Co' } },
    { id: 's1', atomicityGroup: 'g', method: 'POST', url: 'Schemes', body: { SchemeName: 'Patch ref scheme' } },
    {
      id: 'in-group',
      atomicityGroup: 'g',
      method: 'PATCH',
      url: '$s1',
      headers: JSON_PATCH,
      body: [
        // While Address is null, an /Address/Id path sets the whole relation (as alone).
        { op: 'add', path: '/Address/Id', value: '$a1' },
        { op: 'add', path: '/Companies/-', value: { Company: { Id: '$c1' }, Role: 'Developer' } },
      ],
    },
    { id: 'seen', atomicityGroup: 'g', method: 'GET', url: '$s1?$expand=Companies' },
    {
      id: 'after',
      dependsOn: ['g'],
      method: 'PATCH',
      url: '$s1',
      headers: { 'content-type': 'application/json-patch+json' },
      body: [{ op: 'replace', path: '/Address/Id', value: '$a2' }],
    },
    {
      id: 'value',
      dependsOn: ['after', 'g'],
      method: 'PATCH',
      url: '$s1',
      headers: JSON_PATCH,
      body: [
        { op: 'replace', path: '/Market', value: null },
        { op: 'add', path: '/Companies/-', value: { Company: { Id: '$c1' }, Role: 'Lender' } },
      ],
    },
    { id: 'final', dependsOn: ['value', 'g'], method: 'GET', url: '$s1?$expand=Companies' },
  ];
  const r = byId(await batch(stack, requests));
  for (const id of ['in-group', 'after', 'value']) t.is(r[id]!.status, 204, `${id}: ${JSON.stringify(r[id])}`);
  const [a1, a2, c1, s1] = createdIds(r, ['a1', 'a2', 'c1', 's1']);
  t.is(r.seen!.status, 200, JSON.stringify(r.seen));
  t.like(r.seen!.body as Doc, { Id: s1, Address: { Id: a1 } });
  t.deepEqual(
    ((r.seen!.body as Doc).Companies as Doc[]).map((c) => [(c.Company as Doc).Id, c.Role]),
    [[c1, 'Developer']],
  );
  t.like(r.final!.body as Doc, { Id: s1, Address: { Id: a2 } });
  t.deepEqual(
    ((r.final!.body as Doc).Companies as Doc[]).map((c) => [(c.Company as Doc).Id, c.Role]),
    [
      [c1, 'Developer'],
      [c1, 'Lender'],
    ],
  );
  t.is(headerOf(r.final!, 'etag') ?? null, (await stack.get(`/Schemes/${s1}?$expand=Companies`)).headers.get('etag'));
  const row = (await stack.knex('schemes').where({ encoded_id: s1 }).first()) as {
    address_id: number;
    version: number;
  };
  t.is(encodeId('Address', row.address_id), a2);
  t.is(row.version, 4, 'created, then three PATCHes');
});

test('text that looks like a reference is text: only relation Ids and /Id paths are references', async (t) => {
  const requests: BatchRequest[] = [
    { id: 'a', method: 'POST', url: 'Companies', body: { Name: 'Dollar A' } },
    { id: 'x', dependsOn: ['a'], method: 'POST', url: 'Companies', body: { Name: '$a', RegistrationNumber: '$x' } },
    {
      id: 's',
      dependsOn: ['a'],
      method: 'POST',
      url: 'Schemes',
      body: { SchemeName: '$a', Notes: [{ Text: '$a' }], Tags: [{ Name: '$s' }] },
    },
    {
      id: 'p',
      dependsOn: ['a', 's'],
      method: 'PATCH',
      url: '$a',
      headers: JSON_PATCH,
      body: [{ op: 'replace', path: '/Name', value: '$s' }],
    },
  ];
  const r = byId(await batch(stack, requests));
  t.is(r.p!.status, 204, JSON.stringify(r.p));
  const [a, x, s] = createdIds(r, ['a', 'x', 's']);
  t.like(await read(stack, `/Companies/${a}`), { Name: '$s' });
  t.like(await read(stack, `/Companies/${x}`), { Name: '$a', RegistrationNumber: '$x' });
  const scheme = await read(stack, `/Schemes/${s}`);
  t.like(scheme, { SchemeName: '$a' });
  t.deepEqual([(scheme.Notes as Doc[])[0]!.Text, (scheme.Tags as Doc[])[0]!.Name], ['$a', '$s']);
});

test('a GET sees every write of the batch before it, inside and outside groups', async (t) => {
  const filter = `Companies?$filter=${encodeURIComponent("startswith(Name,'Seen ')")}&$orderby=Name`;
  const requests: BatchRequest[] = [
    { id: 'empty', method: 'GET', url: filter },
    { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Seen 1' } },
    { id: 'in-group', atomicityGroup: 'g', method: 'GET', url: filter },
    { id: 'c2', method: 'POST', url: 'Companies', body: { Name: 'Seen 2' } },
    { id: 'both', method: 'GET', url: `${filter}&$count=true` },
    {
      id: 'rename',
      dependsOn: ['c2'],
      method: 'PATCH',
      url: '$c2',
      headers: JSON_PATCH,
      body: [{ op: 'replace', path: '/Name', value: 'Seen 3' }],
    },
    { id: 'renamed', method: 'GET', url: filter },
    { id: 'count', method: 'GET', url: `Companies/$count?$filter=${encodeURIComponent("startswith(Name,'Seen ')")}` },
    { id: 'gone', dependsOn: ['c1'], method: 'DELETE', url: '$c1' },
    { id: 'after-delete', method: 'GET', url: filter },
    { id: 'deleted', dependsOn: ['c1'], method: 'GET', url: '$c1' },
  ];
  const r = byId(await batch(stack, requests));
  const names = (id: string) => (r[id]!.body as Doc[]).map((d) => d.Name);
  t.deepEqual(names('empty'), []);
  t.deepEqual(names('in-group'), ['Seen 1']);
  t.deepEqual(names('both'), ['Seen 1', 'Seen 2']);
  t.is(headerOf(r.both!, 'x-total-count'), '2');
  t.deepEqual(names('renamed'), ['Seen 1', 'Seen 3']);
  t.is(r.count!.body, '2');
  t.is(r.gone!.status, 204);
  t.deepEqual(names('after-delete'), ['Seen 3']);
  assertBatchProblem(t, r.deleted, 404, 'Not Found', { detail: `Company '${createdId(r.c1!)}' does not exist.` });
});

/** The outbox events of an entity, as [name, changed fields, version]. */
async function eventsOf(entityId: string): Promise<[string, string[], number][]> {
  const rows = (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [entityId]).orderBy('id')) as {
    event: DomainEvent;
  }[];
  return rows.map((r) => [r.event.name, r.event.changedFields, r.event.version]);
}

test('a committed group: each entity its events (as written alone), its activity entries, and searchable', async (t) => {
  const requests: BatchRequest[] = [
    {
      id: 'a1',
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Addresses',
      body: { AddressLine: '7 Quillon Wharf', City: 'Zembla' },
    },
    { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Xylophage Holdings' } },
    {
      id: 's1',
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Schemes',
      body: {
        SchemeName: 'Quillon Heights',
        Address: { Id: '$a1' },
        Companies: [{ Company: { Id: '$c1' }, Role: 'Developer' }],
      },
    },
    {
      id: 'p1',
      dependsOn: ['g'],
      method: 'PATCH',
      url: '$s1',
      headers: JSON_PATCH,
      body: [{ op: 'add', path: '/Tags/-', value: { Name: 'waterfront' } }],
    },
  ];
  const r = byId(await batch(stack, requests));
  const [address, company, scheme] = createdIds(r, ['a1', 'c1', 's1']);
  t.is(r.p1!.status, 204);

  // The same writes one by one, on twins: the same events.
  const twinAddress = await create(stack, 'Addresses', { AddressLine: '8 Twin Wharf', City: 'Twin' });
  const twinCompany = await create(stack, 'Companies', { Name: 'Twin Holdings' });
  const twinScheme = await create(stack, 'Schemes', {
    SchemeName: 'Twin Heights',
    Address: { Id: twinAddress },
    Companies: [{ Company: { Id: twinCompany }, Role: 'Developer' }],
  });
  t.is(
    (await patch(stack, `/Schemes/${twinScheme}`, [{ op: 'add', path: '/Tags/-', value: { Name: 'w' } }])).status,
    204,
  );
  for (const [batched, twin] of [
    [address, twinAddress],
    [company, twinCompany],
    [scheme, twinScheme],
  ] as const) {
    t.deepEqual(await eventsOf(batched), await eventsOf(twin), batched);
  }
  const schemeEvent = (
    (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [scheme]).first()) as { event: DomainEvent }
  ).event;
  const addressKey = ((await stack.knex('addresses').where({ encoded_id: address }).first('id')) as { id: number }).id;
  t.like(schemeEvent, { entityType: 'Scheme', subject: 'mock-user', references: { Address: addressKey } });

  // One activity entry per event, for each entity.
  const activities = await waitFor(async () => {
    const res = await stack.get(
      `/Activities?$filter=${encodeURIComponent(`EntityId in ('${address}','${company}','${scheme}')`)}&$top=100`,
    );
    const rows = res.body as Doc[];
    return rows.length >= 4 ? rows : undefined;
  }, 15_000);
  t.deepEqual(
    activities.map((a) => [a.EntityId, a.EventType, a.Subject]).sort(),
    [
      [address, 'AddressCreated', 'mock-user'],
      [company, 'CompanyCreated', 'mock-user'],
      [scheme, 'SchemeCreated', 'mock-user'],
      [scheme, 'SchemeUpdated', 'mock-user'],
    ].sort(),
  );

  // Searchable once the view worker has handled the events.
  const found = (route: string, query: string) =>
    waitFor(async () => {
      const res = await stack.get(`/${route}?$search=${encodeURIComponent(query)}`);
      const ids = (res.body as Doc[]).map((d) => d.Id);
      return ids.length > 0 ? ids : undefined;
    }, 15_000);
  t.deepEqual(await found('Schemes', 'quillon heights'), [scheme]);
  t.deepEqual(await found('Schemes', 'waterfront'), [scheme]);
  t.deepEqual(await found('Schemes', 'xylophage'), [scheme]);
  t.deepEqual(await found('Companies', 'xylophage'), [company]);
  t.deepEqual(await found('Addresses', 'zembla'), [address]);
  t.regex(address!, ID);
});

/** A document with the Ids and timestamps a twin necessarily has differently replaced by placeholders. */
function shape(doc: unknown, ids: Map<string, string>): unknown {
  if (typeof doc === 'string') return ids.get(doc) ?? doc;
  if (Array.isArray(doc)) return doc.map((d) => shape(d, ids));
  if (doc && typeof doc === 'object') {
    return Object.fromEntries(
      Object.entries(doc).map(([k, v]) => [k, k === 'CreatedAt' || k === 'UpdatedAt' ? '<time>' : shape(v, ids)]),
    );
  }
  return doc;
}

async function assertGroupAsAlone(t: ExecutionContext, prefix: string, withPatches: boolean) {
  const schemeBody = (n: number) => ({
    SchemeName: `${prefix} scheme ${n}`,
    TotalUnits: n,
    Address: { Id: `$${prefix}-a${n}` },
    Companies: [
      { Company: { Id: `$${prefix}-c${n}` }, Role: 'Developer', PercentageShare: 0.5 },
      { Company: { Id: `$${prefix}-c${(n + 1) % 5}` }, Role: 'Lender' },
    ],
    Notes: [{ Text: `note ${n} first` }, { Text: `note ${n} second` }, { Text: `note ${n} third` }],
    Tags: [{ Name: `tag-${n}` }],
  });
  const requests: BatchRequest[] = [];
  for (let n = 0; n < 5; n++) {
    requests.push({
      id: `${prefix}-c${n}`,
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Companies',
      body: { Name: `Bulk ${prefix} co ${n}` },
    });
  }
  for (let n = 0; n < 5; n++) {
    requests.push({
      id: `${prefix}-a${n}`,
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Addresses',
      body: { AddressLine: `${n} Bulk ${prefix} Road` },
    });
    requests.push({
      id: `${prefix}-s${n}`,
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Schemes',
      body: schemeBody(n),
    });
    if (withPatches)
      requests.push({
        id: `${prefix}-p${n}`,
        atomicityGroup: 'g',
        method: 'PATCH',
        url: `$${prefix}-s${n}`,
        headers: JSON_PATCH,
        body: [
          { op: 'remove', path: '/Notes/1' },
          { op: 'add', path: '/Notes/0', value: { Text: `note ${n} zeroth` } },
          { op: 'replace', path: '/TotalUnits', value: n + 100 },
        ],
      });
  }
  const r = byId(await batch(stack, requests));
  for (const request of requests) t.true(r[request.id]!.status < 300, JSON.stringify(r[request.id]));

  // The same writes alone, one by one, with the same ids turned into real ones.
  const ids = new Map<string, string>();
  const alone = new Map<string, string>();
  for (const request of requests) {
    const resolve = (body: unknown) =>
      JSON.parse(JSON.stringify(body), (_, v: unknown) =>
        typeof v === 'string' && v.startsWith(`$${prefix}-`) ? alone.get(v.slice(1)) : v,
      ) as unknown;
    if (request.method === 'POST') {
      const id = await create(stack, request.url, resolve(request.body));
      alone.set(request.id, id);
      ids.set(id, `<${request.id}>`);
      ids.set(createdId(r[request.id]!), `<${request.id}>`);
    } else {
      const res = await patch(stack, `/Schemes/${alone.get(request.url.slice(1))!}`, request.body);
      t.is(res.status, 204);
    }
  }
  for (let n = 0; n < 5; n++) {
    const batched = await read(stack, `/Schemes/${createdId(r[`${prefix}-s${n}`]!)}?$expand=Companies`);
    const single = await read(stack, `/Schemes/${alone.get(`${prefix}-s${n}`)!}?$expand=Companies`);
    // Owned items have Ids of their own: compare without them.
    const noItemIds = (doc: Record<string, unknown>) =>
      JSON.parse(JSON.stringify(doc), (k, v: unknown) =>
        k === 'Id' && typeof v === 'string' && !ids.has(v) ? '<item>' : v,
      ) as unknown;
    t.deepEqual(shape(noItemIds(batched), ids), shape(noItemIds(single), ids), `scheme ${n}`);
    t.deepEqual(
      ((batched.Notes as Doc[]) ?? []).map((note) => note.Text),
      withPatches
        ? [`note ${n} zeroth`, `note ${n} first`, `note ${n} third`]
        : [`note ${n} first`, `note ${n} second`, `note ${n} third`],
    );
    t.deepEqual(
      await eventsOf(createdId(r[`${prefix}-s${n}`]!)),
      await eventsOf(alone.get(`${prefix}-s${n}`)!),
      `events of scheme ${n}`,
    );
  }
  // Rows in request order, as one by one.
  const keys = (await stack
    .knex('companies')
    .whereLike('name', `Bulk ${prefix} co %`)
    .orderBy('id')
    .pluck('name')) as string[];
  t.deepEqual(
    keys.slice(0, 5),
    [0, 1, 2, 3, 4].map((n) => `Bulk ${prefix} co ${n}`),
  );
}

test('a group of many POSTs with owned collections and references between them: as written alone', async (t) => {
  await assertGroupAsAlone(t, 'bulk', false);
});

test('a group of POSTs with PATCHes of them in between: as written alone', async (t) => {
  await assertGroupAsAlone(t, 'mixed', true);
});
