import test from 'ava';
import createClient from 'openapi-fetch';
import type { paths } from '../generated/openapi';
import { checkedFetch } from '../support/contract';
import { startStack, type Stack } from '../support/stack';

/**
 * A client generated from /openapi.json (openapi-typescript types, openapi-fetch calls): `tsc`
 * type-checks this file against the generated types, and every response is checked against the
 * document by the contract check (checkedFetch).
 */

let stack: Stack;
let client: ReturnType<typeof createClient<paths>>;
test.before(async () => {
  stack = await startStack();
  client = createClient<paths>({ baseUrl: stack.baseUrl, fetch: (request) => checkedFetch(request) });
});
test.after.always(async () => {
  await stack?.close();
});

test('create, read, list with options and patch a Scheme through the generated client', async (t) => {
  const country = await client.POST('/Countries', { body: { Name: 'Atlantis', IsoCode: 'AT' } });
  t.is(country.response.status, 201);
  const countryId = country.response.headers.get('location')!.split('/').pop()!;

  const created = await client.POST('/Schemes', {
    params: { header: { Prefer: 'return=representation' } },
    body: { SchemeName: 'Client Quay', TotalUnits: 12, Country: { Id: countryId }, Tags: [{ Name: 'client' }] },
  });
  t.is(created.response.status, 201);
  // 201 with the entity, or 202 with the command's state: the types say both, the status which.
  const scheme = created.data!;
  if (!('SchemeName' in scheme)) return t.fail(`202: ${JSON.stringify(scheme)}`);
  t.is(scheme.SchemeName, 'Client Quay');
  t.deepEqual(
    scheme.Tags.map((tag) => ('Name' in tag ? tag.Name : undefined)),
    ['client'],
  );

  const keyed = await client.GET('/Schemes/{key}', {
    params: { path: { key: scheme.Id }, query: { $expand: 'Country' } },
  });
  t.is(keyed.response.status, 200);
  const etag = keyed.response.headers.get('etag')!;
  t.like(keyed.data!.Country, { Id: countryId, Name: 'Atlantis' });

  const list = await client.GET('/Schemes', {
    params: { query: { $filter: "SchemeName eq 'Client Quay'", $orderby: 'SchemeName desc', $top: 5, $count: 'true' } },
  });
  t.is(list.response.status, 200);
  t.is(list.response.headers.get('x-total-count'), '1');
  t.deepEqual(
    list.data!.map((s) => s.Id),
    [scheme.Id],
  );

  const patched = await client.PATCH('/Schemes/{key}', {
    params: { path: { key: scheme.Id }, header: { 'If-Match': etag, Prefer: 'return=representation' } },
    body: [{ op: 'replace', path: '/TotalUnits', value: 13 }],
    headers: { 'content-type': 'application/json-patch+json' },
  });
  t.is(patched.response.status, 200);
  const changed = patched.data!;
  if (!('TotalUnits' in changed)) return t.fail(`202: ${JSON.stringify(changed)}`);
  t.is(changed.TotalUnits, 13);
});

test('a problem comes back typed as one', async (t) => {
  const invalid = await client.POST('/Schemes', { body: { SchemeName: '' } });
  t.is(invalid.response.status, 400);
  t.is(invalid.error!.title, 'Validation Failed');
  t.true(invalid.error!.extensions!.errors.some((e) => e.startsWith('Scheme.SchemeName')));

  const missing = await client.GET('/Schemes/{key}', { params: { path: { key: 'nope' } } });
  t.is(missing.response.status, 404);
  t.is(missing.error!.status, 404);
});
