import test from 'ava';
import { OData } from '@odata/client';
import { startStack, type Stack } from '../support/stack';
import { enc, insertReadFixture, type ReadFixture } from '../support/fixtures';
import { checkODataAnswer } from '../support/odata-contract';
import { startCommandWorker } from '../../workers/commands/command-worker';

/**
 * A real OData client from npm, `@odata/client` (OData.New4), against `/odata` on the real stack
 * (DESIGN §17): it reads, filters, expands, pages and counts through its own query API, and creates,
 * updates and deletes through its entity-set API, with no glue. Every answer it receives is checked against our `$metadata` (test/support/odata-contract.ts).
 */

let stack: Stack;
let fx: ReadFixture;
let client: ReturnType<typeof OData.New4>;
let answers = 0;
test.before(async () => {
  // The command worker applies the client's writes (the last test); reads need no worker.
  stack = await startStack({ workers: [(config) => startCommandWorker(config)] });
  fx = await insertReadFixture(stack.knex);
  client = OData.New4({
    serviceEndpoint: `${stack.baseUrl}/odata/`,
    // The client's own fetch, with every answer checked against the metadata on the way.
    fetchProxy: async (url, init) => {
      const response = await fetch(url, init as RequestInit);
      const text = await response.text();
      const received = { method: init.method ?? 'GET', path: url.slice(stack.baseUrl.length), status: response.status };
      checkODataAnswer({ ...received, headers: response.headers, text }, (message) => {
        throw new Error(message);
      });
      answers++;
      const json = response.headers.get('content-type')?.startsWith('application/json');
      return { content: json ? (JSON.parse(text) as unknown) : text, response: response as never };
    },
  });
});
test.after.always(async () => {
  await stack?.close();
});

type Scheme = { Id: string; SchemeName: string; TotalUnits: number | null; Address?: { Id: string; City: string } };

test.serial('a list read returns the value array, a retrieve the entity by its key predicate', async (t) => {
  const schemes = client.getEntitySet<Scheme>('Schemes');
  const all = await schemes.query();
  t.deepEqual(
    all.map((s) => s.SchemeName),
    ['Alpha Tower', 'Beta Yard', 'Gamma Works', "x'; DROP TABLE schemes;--"],
  );
  const id = enc('Scheme', fx.schemes[0]!);
  const one = await schemes.retrieve(id);
  t.is(one.Id, id);
  t.is(one.SchemeName, 'Alpha Tower');
  t.false('Address' in one, 'an unexpanded navigation property is left out');
});

test.serial('filters, expands, selects and counts through the query API', async (t) => {
  const schemes = client.getEntitySet<Scheme>('Schemes');
  const filter = client.newFilter<Scheme>().property('TotalUnits').gt(30);
  const options = client
    .newOptions()
    .filter(filter)
    .expand('Address')
    .select(['SchemeName', 'TotalUnits'])
    .orderby('TotalUnits', 'desc');
  const found = await schemes.query(options);
  t.deepEqual(
    found.map((s) => [s.SchemeName, s.TotalUnits, s.Address?.City]),
    [
      ['Alpha Tower', 120, 'London'],
      ['Beta Yard', 40, 'Dublin'],
    ],
  );
  t.deepEqual(Object.keys(found[0]!).sort(), ['@odata.etag', 'Address', 'Id', 'SchemeName', 'TotalUnits']);
  t.is(await schemes.count(), 4);
  t.is(await schemes.count(client.newFilter<Scheme>().property('SchemeName').eqString('Beta Yard')), 1);
  // OData's null rule at both roots: `ne` includes the rows whose TotalUnits is null.
  t.is(await schemes.count(client.newFilter<Scheme>().property('TotalUnits').ne(40)), 3);
});

test.serial('pages by following @odata.nextLink to the end', async (t) => {
  const first = (await client.newRequest({
    collection: 'Schemes',
    params: client.newOptions().top(3).count(true),
  })) as { value: Scheme[]; '@odata.count': number; '@odata.nextLink'?: string };
  t.is(first['@odata.count'], 4);
  t.is(first.value.length, 3);
  t.is(first['@odata.nextLink'], undefined, '$top=3 limits the whole result');
  const names: string[] = [];
  type Page = { value: Scheme[]; '@odata.nextLink'?: string };
  let page = (await client.newRequest({
    collection: 'Schemes',
    params: client.newOptions().orderby('SchemeName'),
  })) as Page;
  names.push(...page.value.map((s) => s.SchemeName));
  t.is(page['@odata.nextLink'], undefined);
  // Smaller pages through the preference a client sends.
  const paged = OData.New4({
    serviceEndpoint: `${stack.baseUrl}/odata/`,
    commonHeaders: { Prefer: 'odata.maxpagesize=1' },
  });
  page = (await paged.newRequest({ collection: 'Schemes' })) as Page;
  const ids = page.value.map((s) => s.Id);
  const root = `${stack.baseUrl}/odata/`;
  while (page['@odata.nextLink']) {
    // A next link is a URL under the service root: the client requests it as a collection path.
    t.true(page['@odata.nextLink'].startsWith(root));
    page = (await paged.newRequest({ collection: page['@odata.nextLink'].slice(root.length) })) as Page;
    ids.push(...page.value.map((s) => s.Id));
  }
  t.deepEqual(
    ids,
    fx.schemes.map((k) => enc('Scheme', k)),
  );
  t.is(names.length, 4);
  t.true(answers > 5);
});

test.serial('creates, updates and deletes through the entity-set API', async (t) => {
  type Company = { Id: string; Name: string; Website: string | null; '@odata.etag'?: string };
  const companies = client.getEntitySet<Company>('Companies');
  // POST: the client returns the body, which OData's default return=representation fills.
  const created = await companies.create({ Name: 'Client Made', Website: 'https://client.example' });
  t.is(created.Name, 'Client Made');
  t.is(created['@odata.etag'], '"1"');
  t.regex(created.Id, /^[A-Za-z0-9_-]{6,}$/);
  // PATCH: a merge of the named properties.
  await companies.update(created.Id, { Name: 'Client Renamed' });
  const updated = await companies.retrieve(created.Id);
  t.like(updated, { Name: 'Client Renamed', Website: 'https://client.example', '@odata.etag': '"2"' });
  // A relation bound through the client's body, to an entity created through it.
  const schemes = client.getEntitySet<Scheme & { 'Address@odata.bind'?: string }>('Schemes');
  const address = await client
    .getEntitySet<{ Id: string; AddressLine: string }>('Addresses')
    .create({ AddressLine: 'Client Street' });
  const scheme = await schemes.create({
    SchemeName: 'Client Scheme',
    'Address@odata.bind': `Addresses('${address.Id}')`,
  });
  const expanded = await schemes.retrieve(scheme.Id, client.newOptions().expand('Address'));
  t.is(expanded.Address?.Id, address.Id);
  await schemes.delete(scheme.Id);
  await companies.delete(created.Id);
  await t.throwsAsync(() => companies.retrieve(created.Id));
  t.is((await stack.get(`/Companies/${created.Id}`)).status, 404);
});
