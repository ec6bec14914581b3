import test from 'ava';
import type { Stack } from '../support/stack';
import { enc, type ReadFixture } from '../support/fixtures';
import { onReadSuite } from '../support/read-suite';

/**
 * Reads under `/odata` by hand-built requests (DESIGN §17): the envelope, key forms, `/$count`,
 * navigation, `$select` (also inside `$expand`), metadata levels, `odata.maxpagesize` and the
 * keyset next link, and the root unchanged beside it. Every answer is checked against the
 * metadata by the contract check (test/support/odata-contract.ts).
 */

let stack: Stack;
let fx: ReadFixture;
onReadSuite(test, (suite) => ({ stack, fx } = suite));

type Doc = Record<string, unknown>;
type Page = { '@odata.context'?: string; '@odata.count'?: number; '@odata.nextLink'?: string; value: Doc[] };

const scheme = (i: number) => enc('Scheme', fx.schemes[i]!);
const versionOf = async (table: string, id: number) =>
  ((await stack.knex(table).where({ id }).first('version')) as { version: number }).version;

test('a set answers the value envelope with context, count and each entity etag', async (t) => {
  const res = await stack.get('/odata/Schemes?$count=true');
  t.is(res.status, 200);
  t.is(res.headers.get('odata-version'), '4.0');
  t.regex(res.headers.get('content-type')!, /^application\/json;\s*odata\.metadata=minimal/);
  const page = res.body as Page;
  t.is(page['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes`);
  t.is(page['@odata.count'], 4);
  t.deepEqual(Object.keys(page), ['@odata.context', '@odata.count', 'value']);
  const first = page.value[0]!;
  t.is(first.Id, scheme(0));
  t.is(first['@odata.etag'], `"${await versionOf('schemes', fx.schemes[0]!)}"`);
  t.is(Object.keys(first)[0], '@odata.etag', 'control information comes first');
  // Unexpanded navigation properties are left out; complex collections stay (in the list's form).
  for (const nav of ['Address', 'Market', 'Country', 'Developments', 'Companies']) t.false(nav in first, nav);
  t.deepEqual(
    (first.Notes as Doc[]).map((n) => n.Text),
    ['first', 'second'],
  );
  t.deepEqual(first.MarketBoundaries, [{ Id: (first.MarketBoundaries as Doc[])[0]!.Id }]);
  // The root shows the same rows as before: a plain array, relations as {Id}.
  const root = await stack.get('/Schemes?$count=true');
  t.true(Array.isArray(root.body));
  t.is(root.headers.get('x-total-count'), '4');
  t.deepEqual((root.body as Doc[])[0]!.Address, { Id: enc('Address', fx.addresses[0]!) });
  t.false('@odata.etag' in (root.body as Doc[])[0]!);
});

test('keys in every OData form, with the root ETag; $count; unknown keys are OData 404s', async (t) => {
  const id = scheme(0);
  const forms = [`Schemes('${id}')`, `Schemes(Id='${id}')`, `Schemes/${id}`, `Schemes(${fx.schemes[0]})`];
  const root = await stack.get(`/Schemes/${id}`);
  for (const form of forms) {
    const res = await stack.get(`/odata/${form}`);
    t.is(res.status, 200, form);
    t.is(res.headers.get('etag'), root.headers.get('etag'), form);
    const doc = res.body as Doc;
    t.is(doc['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes/$entity`);
    t.is(doc.Id, id);
    t.is(doc['@odata.etag'], root.headers.get('etag'));
    t.is((doc.MarketBoundaries as Doc[])[0]!.Geometry, 'POLYGON((0 0, 1 0, 1 1, 0 0))');
  }
  // Percent-encoded predicates are the same key.
  t.is((await stack.get(`/odata/Schemes%28%27${id}%27%29`)).status, 200);
  const unchanged = await stack.get(`/odata/Schemes('${id}')`, { 'if-none-match': root.headers.get('etag')! });
  t.is(unchanged.status, 304);
  const count = await stack.get(`/odata/Schemes/$count?$filter=TotalUnits gt 30`);
  t.is(count.status, 200);
  t.is(count.text, '2');
  const missing = await stack.get(`/odata/Schemes('AAAAAAAA')`);
  t.is(missing.status, 404);
  t.like((missing.body as { error: Doc }).error, { code: 'NotFound' });
  const malformed = await stack.get(`/odata/Schemes('a'b')`);
  t.is(malformed.status, 404);
  // A key that reads as a path segment is still a key (the property suite found `'$count'` counted).
  t.is((await stack.get(`/odata/Schemes('$count')`)).status, 404);
  t.is((await stack.get(`/odata/Schemes/$count/Address`)).status, 404);
  // Companies take only encoded keys, as at the root.
  t.is((await stack.get(`/odata/Companies(${fx.companies[0]})`)).status, 404);
});

test('navigation: a single relation, a collection with options, a null relation, unknown names', async (t) => {
  const address = await stack.get(`/odata/Schemes('${scheme(0)}')/Address`);
  t.is(address.status, 200);
  const doc = address.body as Doc;
  t.is(doc['@odata.context'], `${stack.baseUrl}/odata/$metadata#Addresses/$entity`);
  t.is(doc.Id, enc('Address', fx.addresses[0]!));
  t.is(doc.City, 'London');
  const asSegment = await stack.get(`/odata/Schemes/${scheme(0)}/Address?$expand=Country`);
  t.is(((asSegment.body as Doc).Country as Doc).IsoCode, 'GB');

  const developments = await stack.get(
    `/odata/Schemes('${scheme(0)}')/Developments?$filter=Name ne 'Phase 1'&$count=true&$select=Name`,
  );
  t.is(developments.status, 200);
  const page = developments.body as Page;
  t.is(page['@odata.context'], `${stack.baseUrl}/odata/$metadata#Developments(Name)`);
  t.is(page['@odata.count'], 1);
  t.deepEqual(
    page.value.map((d) => [d.Name, Object.keys(d).sort()]),
    [['Phase 2', ['@odata.etag', 'Id', 'Name']]],
  );
  const none = await stack.get(`/odata/Schemes('${scheme(1)}')/Developments`);
  t.deepEqual((none.body as Page).value, []);
  const owned = await stack.get(`/odata/Schemes('${scheme(0)}')/Companies?$orderby=PercentageShare desc&$top=1`);
  t.is((owned.body as Page).value[0]!.PercentageShare as number, 0.5);

  const noAddress = await stack.get(`/odata/Schemes('${scheme(2)}')/Address`);
  t.is(noAddress.status, 204);
  t.is(noAddress.text, '');
  for (const path of [
    `Schemes('AAAAAAAA')/Address`,
    `Schemes('AAAAAAAA')/Developments`,
    `Schemes('AAAAAAAA')/Notes`,
    `Schemes('${scheme(0)}')/Nope`,
  ]) {
    const res = await stack.get(`/odata/${path}`);
    t.is(res.status, 404, path);
  }
});

test('$count of a navigation collection, with $filter; a single relation has none', async (t) => {
  const all = await stack.get(`/odata/Schemes('${scheme(0)}')/Developments/$count`);
  t.is(all.status, 200);
  t.regex(all.headers.get('content-type')!, /^text\/plain/);
  t.is(all.text, '2');
  const filtered = await stack.get(`/odata/Schemes/${scheme(0)}/Developments/$count?$filter=Name ne 'Phase 1'`);
  t.is(filtered.text, '1');
  t.is((await stack.get(`/odata/Schemes('${scheme(0)}')/Companies/$count?$filter=Role eq 'Lender'`)).text, '1');
  t.is((await stack.get(`/odata/Schemes('${scheme(1)}')/Developments/$count`)).text, '0');
  // $top and $skip select no rows of a count (as for the set's /$count).
  t.is((await stack.get(`/odata/Schemes('${scheme(0)}')/Developments/$count?$top=1`)).text, '2');
  for (const path of [
    `Schemes('AAAAAAAA')/Developments/$count`,
    `Schemes('${scheme(0)}')/Address/$count`,
    `Schemes('${scheme(0)}')/Notes/$count/x`,
    `Schemes('${scheme(0)}')/Developments/$count/x`,
  ]) {
    const res = await stack.get(`/odata/${path}`);
    t.is(res.status, 404, path);
  }
  const bad = await stack.get(`/odata/Schemes('${scheme(0)}')/Developments/$count?$filter=Nope eq 1`);
  t.is(bad.status, 400);
});

test('a member of a navigation collection by key, only through its own parent', async (t) => {
  const all = (await stack.get(`/odata/Schemes('${scheme(0)}')/Developments?$orderby=Name`)).body as Page;
  const phase = all.value[0]!;
  for (const path of [
    `Schemes('${scheme(0)}')/Developments('${phase.Id as string}')`,
    `Schemes/${scheme(0)}/Developments/${phase.Id as string}`,
    `Schemes('${scheme(0)}')/Developments(Id='${phase.Id as string}')`,
  ]) {
    const res = await stack.get(`/odata/${path}?$select=Name`);
    t.is(res.status, 200, path);
    const doc = res.body as Doc;
    t.is(doc['@odata.context'], `${stack.baseUrl}/odata/$metadata#Developments(Name)/$entity`, path);
    t.deepEqual([doc.Id, doc.Name], [phase.Id, 'Phase 1'], path);
    t.is(res.headers.get('etag'), phase['@odata.etag'] as string, path);
  }
  // The same development through a scheme it does not belong to, a key that is none, a relation with a key.
  for (const path of [
    `Schemes('${scheme(1)}')/Developments('${phase.Id as string}')`,
    `Schemes('AAAAAAAA')/Developments('${phase.Id as string}')`,
    `Schemes('${scheme(0)}')/Developments('AAAAAAAA')`,
    `Schemes('${scheme(0)}')/Address('${enc('Address', fx.addresses[0]!)}')`,
    `Schemes('${scheme(0)}')/Notes('x')`,
  ]) {
    const res = await stack.get(`/odata/${path}`);
    t.is(res.status, 404, path);
  }
  t.regex(
    (await stack.get(`/odata/Schemes('${scheme(1)}')/Developments('${phase.Id as string}')`)).text,
    /is not in Developments of Scheme/,
  );
  // Reads only: a write goes to the entity itself (no resource at PATCH here, as for any path and method).
  const patch = await stack.request('PATCH', `/odata/Schemes('${scheme(0)}')/Developments('${phase.Id as string}')`, {
    body: { Name: 'Renamed' },
  });
  t.is(patch.status, 404);
  t.regex(patch.text, /No resource at PATCH/);
});

test('a complex collection property: its value and $count, no query options on it', async (t) => {
  const res = await stack.get(`/odata/Schemes('${scheme(0)}')/Notes`);
  t.is(res.status, 200);
  const page = res.body as Page;
  t.is(page['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes('${scheme(0)}')/Notes`);
  t.deepEqual(
    page.value.map((n) => n.Text),
    ['first', 'second'],
  );
  const keyed = (await stack.get(`/odata/Schemes('${scheme(0)}')`)).body as Doc;
  t.deepEqual(page.value, keyed.Notes, 'the same items as the entity shows');
  const boundaries = (await stack.get(`/odata/Schemes('${scheme(0)}')/MarketBoundaries`)).body as Page;
  t.deepEqual(boundaries.value, keyed.MarketBoundaries);
  t.is((await stack.get(`/odata/Schemes('${scheme(0)}')/Notes/$count`)).text, '2');
  const other = (await stack.get(`/odata/Schemes('${scheme(1)}')`)).body as { Tags: unknown[] };
  t.is((await stack.get(`/odata/Schemes('${scheme(1)}')/Tags/$count`)).text, String(other.Tags.length));
  const none = await stack.get(`/odata/Schemes('${scheme(0)}')/Notes?$format=application/json;odata.metadata=none`);
  t.deepEqual(Object.keys(none.body as Doc), ['value']);
  const option = await stack.get(`/odata/Schemes('${scheme(0)}')/Notes?$top=1`);
  t.is(option.status, 400);
  t.regex(option.text, /\$top does not apply to the property Notes/);
  const unchanged = await stack.get(`/odata/Schemes('${scheme(0)}')/Notes`, {
    'if-none-match': keyed['@odata.etag'] as string,
  });
  t.is(unchanged.status, 304);
});

test('$select: chosen members and Id, inside $expand too; it wins over always-populated collections', async (t) => {
  const res = await stack.get(
    `/odata/Schemes?$filter=Id eq '${scheme(0)}'&$select=SchemeName,Tags&$expand=Address($select=City),Companies($select=Role;$expand=Company($select=Name))`,
  );
  t.is(res.status, 200);
  const [doc] = (res.body as Page).value;
  t.deepEqual(Object.keys(doc!).sort(), ['@odata.etag', 'Address', 'Companies', 'Id', 'SchemeName', 'Tags']);
  t.deepEqual(Object.keys(doc!.Address as Doc).sort(), ['@odata.etag', 'City', 'Id']);
  const company = (doc!.Companies as Doc[])[0]!;
  t.deepEqual(Object.keys(company).sort(), ['@odata.etag', 'Company', 'Id', 'Role']);
  t.deepEqual(Object.keys(company.Company as Doc).sort(), ['@odata.etag', 'Id', 'Name']);
  t.is((res.body as Page)['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes(SchemeName,Tags)`);
  // `*` is every member; an unknown name is a 400 naming it.
  const star = await stack.get(`/odata/Schemes('${scheme(0)}')?$select=*`);
  t.true('Notes' in (star.body as Doc));
  const keyed = await stack.get(`/odata/Schemes('${scheme(0)}')?$select=TotalUnits`);
  t.deepEqual(Object.keys(keyed.body as Doc).sort(), ['@odata.context', '@odata.etag', 'Id', 'TotalUnits']);
  const unknown = await stack.get('/odata/Schemes?$select=Nope');
  t.is(unknown.status, 400);
  t.regex(
    (unknown.body as { error: { message: string } }).error.message,
    /\$select: unknown property 'Nope' of Scheme/,
  );
  const path = await stack.get('/odata/Schemes?$expand=Address($select=Country/Name)');
  t.is(path.status, 400);
  // The root keeps ignoring $select.
  const root = await stack.get(`/Schemes/${scheme(0)}?$select=SchemeName`);
  t.true('TotalUnits' in (root.body as Doc));
});

test('$select paths: through complex collections served, through navigation properties a 400 naming $expand', async (t) => {
  const res = await stack.get(`/odata/Schemes('${scheme(0)}')?$select=SchemeName,Notes/Text`);
  t.is(res.status, 200);
  const doc = res.body as Doc;
  t.is(doc['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes(SchemeName,Notes/Text)/$entity`);
  t.deepEqual(Object.keys(doc).sort(), ['@odata.context', '@odata.etag', 'Id', 'Notes', 'SchemeName']);
  t.deepEqual(doc.Notes, [{ Text: 'first' }, { Text: 'second' }]);
  // The whole property beside a path into it: the whole; `Id` of an item when named.
  const whole = await stack.get(`/odata/Schemes('${scheme(0)}')?$select=Notes/Text,Notes`);
  t.deepEqual(Object.keys((whole.body as { Notes: Doc[] }).Notes[0]!).sort(), ['Id', 'Text']);
  const list = await stack.get(`/odata/Schemes?$filter=Id eq '${scheme(0)}'&$select=Tags/Id,MarketBoundaries/Id`);
  const [item] = (list.body as Page).value;
  t.deepEqual(Object.keys((item!.Tags as Doc[])[0]!), ['Id']);
  t.deepEqual(Object.keys((item!.MarketBoundaries as Doc[])[0]!), ['Id']);
  // Inside $expand too.
  const nested = await stack.get(`/odata/Developments?$filter=Name eq 'Phase 1'&$expand=Scheme($select=Notes/Text)`);
  const development = (nested.body as Page).value[0]!;
  t.deepEqual(Object.keys(development.Scheme as Doc).sort(), ['@odata.etag', 'Id', 'Notes']);
  t.deepEqual((development.Scheme as Doc).Notes, [{ Text: 'first' }, { Text: 'second' }]);
  // A navigation property may be selected: it shows only when expanded.
  const nav = await stack.get(`/odata/Schemes('${scheme(0)}')?$select=SchemeName,Address`);
  t.false('Address' in (nav.body as Doc));
  const navExpanded = await stack.get(`/odata/Schemes('${scheme(0)}')?$select=SchemeName,Address&$expand=Address`);
  t.is(((navExpanded.body as Doc).Address as Doc).City, 'London');
  const errors: [string, RegExp][] = [
    ['$select=Address/City', /'Address' is a navigation property: .*\$expand=Address\(\$select=City\)/],
    ['$select=Developments/Name', /'Developments' is a navigation property/],
    ['$expand=Address($select=Country/Name)', /'Country' is a navigation property/],
    ['$select=SchemeName/Length', /'SchemeName' is not a complex property/],
    ['$select=Notes/Nope', /unknown property 'Nope' of Note/],
    ['$select=Notes/', /\$select/],
  ];
  for (const [query, message] of errors) {
    const bad = await stack.get(`/odata/Schemes?${query}`);
    t.is(bad.status, 400, query);
    t.regex((bad.body as { error: { message: string } }).error.message, message, query);
  }
});

test('odata.metadata=none drops control information, full adds absolute ids, edit links and types', async (t) => {
  const none = await stack.get('/odata/Schemes?$top=1&$count=true', { accept: 'application/json;odata.metadata=none' });
  t.regex(none.headers.get('content-type')!, /odata\.metadata=none/);
  const page = none.body as Page;
  t.false('@odata.context' in page);
  t.is(page['@odata.count'], 4);
  t.false('@odata.etag' in page.value[0]!);
  const full = await stack.get(
    `/odata/Schemes('${scheme(0)}')?$expand=Address&$format=application/json;odata.metadata=full`,
  );
  t.regex(full.headers.get('content-type')!, /odata\.metadata=full/);
  const doc = full.body as Doc;
  const self = `${stack.baseUrl}/odata/Schemes('${scheme(0)}')`;
  t.like(doc, { '@odata.id': self, '@odata.editLink': self, '@odata.type': '#EntityManagement.Scheme' });
  t.like(doc.Address as Doc, {
    '@odata.id': `${stack.baseUrl}/odata/Addresses('${enc('Address', fx.addresses[0]!)}')`,
    '@odata.type': '#EntityManagement.Address',
  });
  t.false('@odata.id' in (doc.Notes as Doc[])[0]!, 'complex values have no id');
  const bad = await stack.get('/odata/Schemes?$format=xml');
  t.is(bad.status, 400);
  const badLevel = await stack.get('/odata/Schemes', { accept: 'application/json;odata.metadata=some' });
  t.is(badLevel.status, 400);
});

test('$top limits the whole result; pages of odata.maxpagesize follow the keyset next link', async (t) => {
  const first = await stack.get('/odata/Schemes?$top=3', { prefer: 'odata.maxpagesize=2' });
  t.is(first.headers.get('preference-applied'), 'odata.maxpagesize=2');
  const page = first.body as Page;
  t.is(page.value.length, 2);
  t.is(page['@odata.nextLink'], `${stack.baseUrl}/odata/Schemes?$top=1&$filter=Id%20gt%20'${scheme(1)}'`);
  const second = await stack.get(page['@odata.nextLink']!.slice(stack.baseUrl.length), {
    prefer: 'odata.maxpagesize=2',
  });
  t.deepEqual(
    (second.body as Page).value.map((d) => d.Id),
    [scheme(2)],
  );
  t.false('@odata.nextLink' in (second.body as Page));
  // Without $top every row comes, a page at a time; with $orderby the link pages by $skip.
  const ordered = await stack.get('/odata/Schemes?$orderby=SchemeName desc', { prefer: 'odata.maxpagesize=3' });
  t.regex((ordered.body as Page)['@odata.nextLink']!, /\$skip=3$/);
  // The default page is 60, and $top past MAX_TOP is the root's 400.
  t.false('@odata.nextLink' in ((await stack.get('/odata/Schemes')).body as Page));
  t.is((await stack.get('/odata/Schemes?$top=100000')).status, 400);
});

test('writes are routed under /odata (odata-writes.test.ts): a body is checked before anything is queued', async (t) => {
  // No command worker runs here: what answers at once is the API's own check of the body.
  const res = await stack.request('POST', '/odata/Schemes', { body: { 'Nope@odata.bind': 'x' } });
  t.is(res.status, 400);
  t.like((res.body as { error: Doc }).error, { code: 'Validation', target: 'Nope@odata.bind' });
  const merge = await stack.request('PATCH', `/odata/Schemes('${scheme(0)}')`, { body: { Nope: 1 } });
  t.like((merge.body as { error: Doc }).error, { code: 'Validation', target: 'Nope' });
  const head = await stack.request('HEAD', `/odata/Schemes('${scheme(0)}')`);
  t.is(head.status, 200);
  t.is(head.text, '');
});
