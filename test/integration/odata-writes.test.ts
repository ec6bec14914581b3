import test, { type ExecutionContext } from 'ava';
import type { Queue } from 'bullmq';
import type { DomainEvent } from '../../domain/events/domain-event';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { enc } from '../support/fixtures';
import { testQueue } from '../support/queues';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { create, patch, read, waitFor } from '../support/writes';

/**
 * Writes under `/odata` by hand-built requests (DESIGN §17): POST with `@odata.bind` in every URL
 * form or the nested `{Id}`, deep insert of owned collections, `Prefer: return=minimal`, PATCH as
 * merge, PUT, DELETE, `If-Match` with `@odata.etag`, 405/415/400 as OData errors — and each the
 * same command, events and activity entries as the same change at the root. Every answer is checked
 * against `$metadata` by the contract check (test/support/odata-contract.ts).
 */

let stack: Stack;
let commands: Queue;
test.before(async () => {
  stack = await startStack();
  commands = testQueue(stack.config, QUEUE.commands);
});
test.after.always(async () => {
  await commands?.close();
  await stack?.close();
});

type Doc = Record<string, unknown>;
type ODataError = { error: { code: string; message: string; target?: string; details: Doc[] } };

const JSON_ODATA = { 'content-type': 'application/json;odata.metadata=minimal;IEEE754Compatible=false' };

function odataPost(path: string, body: unknown, headers: Record<string, string> = {}) {
  return stack.request('POST', `/odata${path}`, { raw: JSON.stringify(body), headers: { ...JSON_ODATA, ...headers } });
}
function odataPatch(path: string, body: unknown, headers: Record<string, string> = {}) {
  return stack.request('PATCH', `/odata${path}`, { raw: JSON.stringify(body), headers: { ...JSON_ODATA, ...headers } });
}
const keyed = (set: string, id: string) => `/${set}('${id}')`;

/** The encoded Id at the end of an `/odata` Location (`…/Schemes('k')`). */
function idOfLocation(res: HttpResult): string {
  const match = /\('([^']+)'\)$/.exec(res.headers.get('location') ?? '');
  if (!match) throw new Error(`no entity URL in Location: ${res.headers.get('location')}`);
  return match[1]!;
}

function assertODataError(t: ExecutionContext, res: HttpResult, status: number, code?: string): ODataError {
  t.is(res.status, status, res.text);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  t.is(res.headers.get('odata-version'), '4.0');
  const body = res.body as ODataError;
  if (code !== undefined) t.is(body.error.code, code, res.text);
  return body;
}

const targetsOf = (body: ODataError) => body.error.details.map((d) => d.target);

async function address(line: string): Promise<string> {
  return create(stack, 'Addresses', { AddressLine: line });
}

test('POST answers 201, Location and the entity in the OData format; the root shows what was written', async (t) => {
  const a = await address('1 Bind Street');
  const res = await odataPost('/Schemes', {
    '@odata.type': '#EntityManagement.Scheme',
    '@odata.context': 'ignored',
    SchemeName: 'Posted',
    'SchemeName@odata.type': '#String',
    TotalUnits: 12,
    'Address@odata.bind': `Addresses('${a}')`,
    Notes: [{ '@odata.type': '#EntityManagement.Note', Text: 'one' }],
  });
  t.is(res.status, 201, res.text);
  const id = idOfLocation(res);
  t.is(res.headers.get('location'), `${stack.baseUrl}/odata/Schemes('${id}')`);
  t.is(res.headers.get('etag'), '"1"');
  t.regex(res.headers.get('content-type')!, /^application\/json;\s*odata\.metadata=minimal/);
  t.is(res.headers.get('preference-applied'), null, 'the default is not a preference applied');
  const body = res.body as Doc;
  t.is(body['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes/$entity`);
  t.is(body['@odata.etag'], '"1"');
  t.like(body, { Id: id, SchemeName: 'Posted', TotalUnits: 12 });
  t.deepEqual(
    (body.Notes as Doc[]).map((n) => n.Text),
    ['one'],
  );
  t.false('Address' in body, 'unexpanded navigation is left out, as on a read');
  // What the entity is, read at the root, and the same representation as a later /odata read.
  const root = await read(stack, `/Schemes/${id}`);
  t.like(root, { SchemeName: 'Posted', TotalUnits: 12, Address: { Id: a } });
  const again = await stack.get(`/odata${keyed('Schemes', id)}`);
  t.deepEqual(again.body, body);
});

test('Prefer: return=minimal answers 204 with OData-EntityId and Location', async (t) => {
  const res = await odataPost('/Companies', { Name: 'Minimal Ltd' }, { prefer: 'return=minimal' });
  t.is(res.status, 204, res.text);
  t.is(res.text, '');
  const id = idOfLocation(res);
  t.is(res.headers.get('odata-entityid'), `${stack.baseUrl}/odata/Companies('${id}')`);
  t.is(res.headers.get('location'), res.headers.get('odata-entityid'));
  t.is(res.headers.get('preference-applied'), 'return=minimal');
  t.is(res.headers.get('etag'), '"1"');
  t.like(await read(stack, `/Companies/${id}`), { Name: 'Minimal Ltd' });
});

test('@odata.bind in every URL form clients send, the nested {Id} and an entity reference all set the relation', async (t) => {
  const a = await address('2 Form Street');
  const forms: Doc[] = [
    { 'Address@odata.bind': `Addresses('${a}')` },
    { 'Address@odata.bind': `Addresses(Id='${a}')` },
    { 'Address@odata.bind': `Addresses/${a}` },
    { 'Address@odata.bind': `/odata/Addresses('${a}')` },
    { 'Address@odata.bind': `${stack.baseUrl}/odata/Addresses('${a}')` },
    { 'Address@odata.bind': `https://proxy.example/odata/Addresses/${a}` },
    { Address: { Id: a } },
    { Address: { '@odata.id': `Addresses('${a}')` } },
  ];
  for (const [i, form] of forms.entries()) {
    const res = await odataPost('/Schemes', { SchemeName: `Form ${i}`, ...form }, { prefer: 'return=minimal' });
    t.is(res.status, 204, `${JSON.stringify(form)}: ${res.text}`);
    t.like(await read(stack, `/Schemes/${idOfLocation(res)}`), { Address: { Id: a } }, JSON.stringify(form));
  }
});

test('binds that name nothing of the target set, or a collection, are 400s naming the property', async (t) => {
  const a = await address('3 Wrong Street');
  const company = await create(stack, 'Companies', { Name: 'Not An Address' });
  const wrong = [
    `Companies('${company}')`,
    'Addresses',
    `Addresses('${a}')/Country`,
    `http://host/elsewhere/Addresses('${a}')`,
    `Addresses('${a}')?x=1`,
    42,
  ];
  for (const value of wrong) {
    const res = await odataPost('/Schemes', { SchemeName: 'Bad bind', 'Address@odata.bind': value });
    const body = assertODataError(t, res, 400, 'Validation');
    t.deepEqual(targetsOf(body), ['Address@odata.bind'], JSON.stringify(value));
    t.is(body.error.target, 'Address@odata.bind');
  }
  const collection = await odataPost('/Schemes', { SchemeName: 'x', 'Developments@odata.bind': [] });
  t.deepEqual(targetsOf(assertODataError(t, collection, 400)), ['Developments@odata.bind']);
  const both = await odataPost('/Schemes', {
    SchemeName: 'x',
    Address: null,
    'Address@odata.bind': `Addresses('${a}')`,
  });
  t.deepEqual(targetsOf(assertODataError(t, both, 400)), ['Address@odata.bind']);
  const type = await odataPost('/Schemes', { '@odata.type': '#EntityManagement.Company', SchemeName: 'x' });
  t.deepEqual(targetsOf(assertODataError(t, type, 400)), ['@odata.type']);
  t.is(await stack.knex('schemes').where({ scheme_name: 'Bad bind' }).first(), undefined);
});

test('a bind to an entity that does not exist answers as the root does for a missing related entity', async (t) => {
  const missing = enc('Address', 987654);
  const root = await stack.request('POST', '/Schemes', { body: { SchemeName: 'Orphan', Address: { Id: missing } } });
  const odata = await odataPost('/Schemes', { SchemeName: 'Orphan', 'Address@odata.bind': `Addresses('${missing}')` });
  const body = assertODataError(t, odata, root.status, 'Validation');
  t.deepEqual(
    body.error.details.map((d) => d.message),
    (root.body as { extensions: { errors: string[] } }).extensions.errors,
  );
  t.deepEqual(targetsOf(body), ['Address.Id']);
});

test('deep insert: every owned collection inline, item relations bound', async (t) => {
  const [market, company] = await Promise.all([
    create(stack, 'Markets', { Name: 'Deep Market' }),
    create(stack, 'Companies', { Name: 'Deep Partner' }),
  ]);
  const res = await odataPost('/Schemes', {
    SchemeName: 'Deep',
    Notes: [{ Text: 'n1' }, { Text: 'n2' }],
    Tags: [{ Name: 't1' }],
    ExternalLinks: [{ Url: 'https://example.com/deep', Title: 'Deep' }],
    MarketBoundaries: [{ 'Market@odata.bind': `Markets('${market}')`, Geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))' }],
    Companies: [{ 'Company@odata.bind': `Companies('${company}')`, Role: 'Developer', PercentageShare: 0.5 }],
  });
  t.is(res.status, 201, res.text);
  const id = idOfLocation(res);
  const root = await read(stack, `/Schemes/${id}?$expand=Companies`);
  t.deepEqual(
    (root.Notes as Doc[]).map((n) => n.Text),
    ['n1', 'n2'],
  );
  t.deepEqual(
    (root.Tags as Doc[]).map((n) => n.Name),
    ['t1'],
  );
  t.like((root.ExternalLinks as Doc[])[0], { Url: 'https://example.com/deep', Title: 'Deep' });
  t.like((root.MarketBoundaries as Doc[])[0], { Market: { Id: market } });
  t.like((root.Companies as Doc[])[0], { Company: { Id: company }, Role: 'Developer', PercentageShare: 0.5 });
  // An item's own binds are checked like the entity's.
  const bad = await odataPost('/Schemes', {
    SchemeName: 'Deep bad',
    Companies: [{ 'Company@odata.bind': `Schemes('${id}')`, Role: 'x' }],
  });
  t.deepEqual(targetsOf(assertODataError(t, bad, 400)), ['Companies[0].Company@odata.bind']);
});

async function scheme(name: string, extra: Doc = {}): Promise<string> {
  const a = await address(`${name} Street`);
  return create(stack, 'Schemes', {
    SchemeName: name,
    TotalUnits: 7,
    CompletionDate: '2025-01-31',
    Address: { Id: a },
    Notes: [{ Text: 'kept' }],
    Tags: [{ Name: 'kept' }],
    ...extra,
  });
}

const withoutVersioning = ({ UpdatedAt: _u, ...doc }: Doc) => doc;

test('PATCH is a merge: only the named properties change; a bind moves a relation; null clears; a collection given is replaced', async (t) => {
  const id = await scheme('Merge');
  const before = await read(stack, `/Schemes/${id}`);
  const renamed = await odataPatch(keyed('Schemes', id), { SchemeName: 'Merged' });
  t.is(renamed.status, 204, renamed.text);
  t.is(renamed.text, '');
  t.is(renamed.headers.get('etag'), '"2"');
  const after = await read(stack, `/Schemes/${id}`);
  t.deepEqual(withoutVersioning(after), { ...withoutVersioning(before), SchemeName: 'Merged' });

  const other = await address('Moved Street');
  const moved = await odataPatch(`/Schemes/${id}`, {
    'Address@odata.bind': `Addresses('${other}')`,
    TotalUnits: null,
    Notes: [{ Text: 'replaced' }],
  });
  t.is(moved.status, 204, moved.text);
  const last = await read(stack, `/Schemes/${id}`);
  t.like(last, { SchemeName: 'Merged', TotalUnits: null, CompletionDate: '2025-01-31', Address: { Id: other } });
  t.deepEqual(
    (last.Notes as Doc[]).map((n) => n.Text),
    ['replaced'],
  );
  t.deepEqual(last.Tags, before.Tags, 'a collection not named is untouched');

  // return=representation: 200 and the entity in the OData format; Id=… is the same key.
  const shown = await odataPatch(
    `/Schemes(Id='${id}')`,
    { 'Address@odata.bind': null },
    {
      prefer: 'return=representation',
    },
  );
  t.is(shown.status, 200, shown.text);
  t.is(shown.headers.get('preference-applied'), 'return=representation');
  t.like(shown.body, {
    '@odata.context': `${stack.baseUrl}/odata/$metadata#Schemes/$entity`,
    '@odata.etag': '"4"',
    Id: id,
    SchemeName: 'Merged',
  });
  t.like(await read(stack, `/Schemes/${id}`), { Address: null });
});

test('PATCH refuses what the root refuses, before anything changes, as OData errors with details', async (t) => {
  const id = await scheme('Refused');
  const version = async () =>
    ((await stack.knex('schemes').where({ encoded_id: id }).first('version')) as { version: number }).version;
  const unknown = await odataPatch(keyed('Schemes', id), { Nope: 1, SchemeName: 'x' });
  t.deepEqual(targetsOf(assertODataError(t, unknown, 400, 'Validation')), ['Nope']);
  const invalid = await odataPatch(keyed('Schemes', id), { SchemeName: '', TotalUnits: -1 });
  t.deepEqual(targetsOf(assertODataError(t, invalid, 400, 'Validation')).sort(), ['SchemeName', 'TotalUnits']);
  const required = await odataPatch(keyed('Schemes', id), { SchemeName: null });
  t.deepEqual(targetsOf(assertODataError(t, required, 400)), ['SchemeName']);
  const otherId = await odataPatch(keyed('Schemes', id), { Id: enc('Scheme', 999999), SchemeName: 'x' });
  t.deepEqual(targetsOf(assertODataError(t, otherId, 400)), ['Id']);
  const notObject = await odataPatch(keyed('Schemes', id), [{ op: 'replace', path: '/SchemeName', value: 'x' }]);
  assertODataError(t, notObject, 400);
  const readOnly = await odataPatch(keyed('Schemes', id), { 'Developments@odata.bind': [] });
  assertODataError(t, readOnly, 400);
  t.is(await version(), 1, 'nothing was written');
  // The same key, read-only members given back as read: ignored.
  const echoed = await odataPatch(keyed('Schemes', id), { Id: id, CreatedAt: 'whenever', SchemeName: 'Echoed' });
  t.is(echoed.status, 204, echoed.text);
  t.like(await read(stack, `/Schemes/${id}`), { SchemeName: 'Echoed' });
});

test('If-Match takes @odata.etag: 412 when stale, applied when current or *', async (t) => {
  const id = await scheme('Matched');
  const etag = ((await stack.get(`/odata${keyed('Schemes', id)}`)).body as Doc)['@odata.etag'] as string;
  t.is((await odataPatch(keyed('Schemes', id), { TotalUnits: 8 }, { 'if-match': etag })).status, 204);
  const stale = await odataPatch(keyed('Schemes', id), { TotalUnits: 9 }, { 'if-match': etag });
  assertODataError(t, stale, 412, 'PreconditionFailed');
  const staleDelete = await stack.request('DELETE', `/odata${keyed('Schemes', id)}`, { headers: { 'if-match': etag } });
  assertODataError(t, staleDelete, 412);
  t.is((await odataPatch(keyed('Schemes', id), { TotalUnits: 10 }, { 'if-match': '*' })).status, 204);
  t.like(await read(stack, `/Schemes/${id}`), { TotalUnits: 10 });
});

test('PUT replaces the whole entity as at the root; DELETE answers 204, then the entity is a 404', async (t) => {
  const id = await scheme('Replaced');
  const put = await stack.request('PUT', `/odata/Schemes/${id}`, {
    raw: JSON.stringify({ '@odata.etag': 'ignored', SchemeName: 'Put', 'Address@odata.bind': null }),
    headers: JSON_ODATA,
  });
  t.is(put.status, 204, put.text);
  t.like(await read(stack, `/Schemes/${id}`), { SchemeName: 'Put', TotalUnits: null, Address: null, Notes: [] });
  const deleted = await stack.request('DELETE', `/odata${keyed('Schemes', id)}`);
  t.is(deleted.status, 204, deleted.text);
  assertODataError(t, await stack.get(`/odata${keyed('Schemes', id)}`), 404, 'NotFound');
  t.is((await stack.get(`/Schemes/${id}`)).status, 404);
  assertODataError(t, await stack.request('DELETE', `/odata${keyed('Schemes', id)}`), 404);
  assertODataError(t, await odataPatch(keyed('Schemes', id), { SchemeName: 'x' }), 404);
});

test('read-only sets answer 405, other media types 415, all as OData errors', async (t) => {
  const post = await odataPost('/Activities', { EventType: 'x' });
  assertODataError(t, post, 405, 'MethodNotAllowed');
  t.is(post.headers.get('allow'), 'GET');
  for (const method of ['PATCH', 'PUT', 'DELETE']) {
    const res = await stack.request(method, `/odata/Activities('${enc('Activity', 1)}')`, { body: {} });
    assertODataError(t, res, 405, 'MethodNotAllowed');
  }
  const text = await stack.request('POST', '/odata/Companies', {
    raw: '{"Name":"x"}',
    headers: { 'content-type': 'text/plain' },
  });
  assertODataError(t, text, 415, 'UnsupportedMediaType');
  const jsonPatch = await stack.request('PATCH', `/odata/Companies('${enc('Company', 1)}')`, {
    raw: '[]',
    headers: { 'content-type': 'application/json-patch+json' },
  });
  assertODataError(t, jsonPatch, 415);
  const malformed = await stack.request('POST', '/odata/Companies', { raw: '{"Name":', headers: JSON_ODATA });
  assertODataError(t, malformed, 400);
  const huge = await odataPost('/Companies', { Name: 'x'.repeat(1024 * 1024) });
  assertODataError(t, huge, 413);
  const long = await odataPost('/Companies', { Name: 'x'.repeat(5000) });
  t.deepEqual(targetsOf(assertODataError(t, long, 400)), ['Name']);
});

async function eventsOf(entityId: string): Promise<DomainEvent[]> {
  const rows = (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [entityId]).orderBy('id')) as {
    event: DomainEvent;
  }[];
  return rows.map((r) => r.event);
}

/** The command a write sent, as its job carries it: what it does, not who sent it when. */
async function commandOf(event: DomainEvent): Promise<Doc> {
  const job = await commands.getJob(event.commandId);
  if (!job) throw new Error(`no job ${event.commandId}`);
  const { name, entity, body, patch: operations, ifMatch } = job.data as Doc;
  return { name, entity, body, patch: operations, ifMatch };
}

async function activitiesOf(entityId: string, count: number): Promise<Doc[]> {
  return waitFor(async () => {
    const res = await stack.get(`/Activities?$filter=EntityId eq '${entityId}'`);
    const rows = res.body as Doc[];
    return rows.length >= count
      ? rows.map(({ EventType, EntityType, Subject, ChangedFields }) => ({
          EventType,
          EntityType,
          Subject,
          ChangedFields,
        }))
      : undefined;
  });
}

test('each /odata write is the same command, events and activity entries as the same change at the root', async (t) => {
  const [a, b] = await Promise.all([address('Twin A'), address('Twin B')]);
  // Create: the root's nested {Id} and /odata's bind make one command body.
  const rootId = await create(stack, 'Schemes', { SchemeName: 'Twin', Address: { Id: a }, Tags: [{ Name: 't' }] });
  const created = await odataPost(
    '/Schemes',
    { SchemeName: 'Twin', 'Address@odata.bind': `Addresses('${a}')`, Tags: [{ Name: 't' }] },
    { prefer: 'return=minimal' },
  );
  const odataId = idOfLocation(created);
  // Update: the root's JSON Patch of `add` operations and /odata's merge of the same members.
  const rootPatch = await patch(stack, `/Schemes/${rootId}`, [
    { op: 'add', path: '/SchemeName', value: 'Twin 2' },
    { op: 'add', path: '/Address', value: { Id: b } },
    { op: 'add', path: '/TotalUnits', value: null },
  ]);
  t.is(rootPatch.status, 204, rootPatch.text);
  const odataMerge = await odataPatch(keyed('Schemes', odataId), {
    SchemeName: 'Twin 2',
    'Address@odata.bind': `Addresses('${b}')`,
    TotalUnits: null,
  });
  t.is(odataMerge.status, 204, odataMerge.text);
  t.is((await stack.request('DELETE', `/Schemes/${rootId}`)).status, 204);
  t.is((await stack.request('DELETE', `/odata${keyed('Schemes', odataId)}`)).status, 204);

  const [rootEvents, odataEvents] = await Promise.all([eventsOf(rootId), eventsOf(odataId)]);
  const shape = (e: DomainEvent) => [e.name, e.changedFields, e.version, e.subject];
  t.deepEqual(odataEvents.map(shape), rootEvents.map(shape));
  t.deepEqual(
    rootEvents.map((e) => e.name),
    ['SchemeCreated', 'SchemeUpdated', 'SchemeDeleted'],
  );
  for (const [i, event] of rootEvents.entries()) {
    t.deepEqual(await commandOf(odataEvents[i]!), await commandOf(event), event.name);
  }
  t.deepEqual(await activitiesOf(odataId, 3), await activitiesOf(rootId, 3));
});
