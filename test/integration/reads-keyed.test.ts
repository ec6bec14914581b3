import test from 'ava';
import type { Stack } from '../support/stack';
import { enc, type ReadFixture } from '../support/fixtures';
import { onReadSuite } from '../support/read-suite';

let stack: Stack;
let fx: ReadFixture;
onReadSuite(test, (suite) => ({ stack, fx } = suite));

type Doc = Record<string, unknown>;

test('keyed GET by encoded Id shows the spec representation', async (t) => {
  const id = enc('Scheme', fx.schemes[0]!);
  const res = await stack.get(`/Schemes/${id}`);
  t.is(res.status, 200);
  const doc = res.body as Doc;
  t.is(doc.Id, id);
  t.is(doc.SchemeName, 'Alpha Tower');
  t.deepEqual(doc.Address, { Id: enc('Address', fx.addresses[0]!) });
  t.is(doc.BuildingType, null);
  t.deepEqual(doc.Notes, [
    { Id: (doc.Notes as Doc[])[0]!.Id, Text: 'first' },
    { Id: (doc.Notes as Doc[])[1]!.Id, Text: 'second' },
  ]);
  t.deepEqual(
    (doc.Tags as Doc[]).map((x) => x.Name),
    ['flagship'],
  );
  t.deepEqual(doc.ExternalLinks, []);
  // Keyed reads carry the boundary geometry.
  t.like((doc.MarketBoundaries as Doc[])[0]!, {
    Geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))',
    Market: { Id: enc('Market', fx.markets[0]!) },
  });
  // Collections that are not always populated appear only when expanded.
  t.false('Companies' in doc);
  t.false('Developments' in doc);
  t.regex(doc.CreatedAt as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // No integer keys or foreign-key columns anywhere.
  t.notRegex(res.text, /_id"|"id"/);
});

test('padded 8-character keys and bare integers are accepted where the spec says', async (t) => {
  const id = enc('Scheme', fx.schemes[1]!);
  t.is((await stack.get(`/Schemes/${id}==`)).status, 200);
  const bare = await stack.get(`/Schemes/${fx.schemes[1]}`);
  t.is(bare.status, 200);
  t.is((bare.body as Doc).Id, id);
  t.is((await stack.get(`/Addresses/${fx.addresses[0]}`)).status, 200);
  t.is((await stack.get(`/InvestmentEvents/${fx.investmentEvents[0]}`)).status, 200);
  t.is((await stack.get(`/Portfolios/${fx.portfolio}`)).status, 200);
  // Companies accept only the encoded form.
  const company = await stack.get(`/Companies/${fx.companies[0]}`);
  t.is(company.status, 404);
  t.is((await stack.get(`/Companies/${enc('Company', fx.companies[0]!)}`)).status, 200);
});

test('unknown, undecodable and other-type keys are 404 problems', async (t) => {
  const schemeId = enc('Scheme', fx.schemes[0]!);
  for (const path of [
    `/Schemes/${enc('Scheme', 999999)}`,
    `/Schemes/${schemeId}x`,
    `/Schemes/${schemeId}=`,
    `/Schemes/!!!!!!`,
    `/Schemes/999999`,
    `/Companies/${schemeId}`,
    `/Addresses/${schemeId}`,
  ]) {
    const res = await stack.get(path);
    t.is(res.status, 404, path);
    t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    t.like(res.body as Doc, { type: 'about:blank', title: 'Not Found', status: 404 });
    t.is(typeof (res.body as Doc).detail, 'string');
  }
});

test('ETag follows the row version and If-None-Match gives 304', async (t) => {
  // A company of its own: the other tests of this file run concurrently and read the fixture's
  // companies by name (the $expand test would see a rename of one of them).
  const [row] = (await stack.knex('companies').insert({ name: 'Versioned Holdings' }).returning('id')) as {
    id: number;
  }[];
  const path = `/Companies/${enc('Company', row!.id)}`;
  const first = await stack.get(path);
  const etag = first.headers.get('etag');
  t.truthy(etag);
  t.is((await stack.get(path, { 'if-none-match': etag! })).status, 304);
  await stack.knex('companies').where({ id: row!.id }).update({ name: 'Versioned Holdings plc' });
  const second = await stack.get(path);
  t.not(second.headers.get('etag'), etag);
  t.is((second.body as Doc).Name, 'Versioned Holdings plc');
});

test('$expand applies on keyed reads, nested too', async (t) => {
  const res = await stack.get(
    `/Schemes/${fx.schemes[0]}?$expand=Address($expand=Country),Companies($expand=Company),Developments`,
  );
  t.is(res.status, 200);
  const doc = res.body as Doc;
  t.like(doc.Address as Doc, { AddressLine: '1 High Street', Country: { Name: 'United Kingdom', IsoCode: 'GB' } });
  const companies = doc.Companies as Doc[];
  t.deepEqual(
    companies.map((c) => (c.Company as Doc).Name),
    ['Acme Holdings', 'Beta 100% Capital_', 'Gamma Partners'],
  );
  t.is((doc.Developments as Doc[]).length, 2);
});

test('each route family reads', async (t) => {
  for (const route of [
    'Schemes',
    'Addresses',
    'Companies',
    'BuildingTypes',
    'Developments',
    'DevelopmentTypes',
    'DevelopmentStatuses',
    'Markets',
    'Countries',
    'InvestmentEvents',
    'OccupierEvents',
    'Portfolios',
    'SchemeMarketBoundaries',
    'SchemeCompanies',
    'InvestmentCompanies',
  ]) {
    const res = await stack.get(`/${route}`);
    t.is(res.status, 200, route);
    t.true(Array.isArray(res.body), route);
  }
});

test('without replicas X-Consistency-Token is checked for form only: every read is on the primary already', async (t) => {
  // No write answer carries a token here; one sent anyway (even far beyond the primary's WAL) waits
  // for nothing and moves no read, so it is harmless and ignored. Malformed ones are 400 as with replicas.
  const id = enc('Scheme', fx.schemes[0]!);
  for (const token of ['0-1', 'FFFFFFFF-FFFFFFFF']) {
    t.is((await stack.get(`/Schemes/${id}`, { 'x-consistency-token': token })).status, 200, token);
  }
  const bad = await stack.get(`/Schemes/${id}`, { 'x-consistency-token': 'nonsense' });
  t.is(bad.status, 400);
  t.regex((bad.body as { detail: string }).detail, /^X-Consistency-Token: /);
});
