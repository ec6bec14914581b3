import test from 'ava';
import { encodeId } from '../../domain/ids/id-codec';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { assertProblem, create, read, referenceId } from '../support/writes';

/** DELETE (DESIGN §6, §10): 204, owned children go along, referrers block with a 409 naming them. */

type Doc = Record<string, unknown>;

let stack: Stack;
let london: string;
test.before(async () => {
  stack = await startStack({ workers: [(config) => startCommandWorker(config)] });
  london = await referenceId(stack, 'Market', 'markets', { name: 'Central London' });
});
test.after.always(async () => {
  await stack?.close();
});

const del = (path: string, headers: Record<string, string> = {}) => stack.request('DELETE', path, { headers });

async function keyOf(table: string, encoded: string, entity: string): Promise<number> {
  const rows = (await stack.knex(table).select('id')) as { id: number }[];
  const row = rows.find((r) => encodeId(entity, r.id) === encoded);
  if (!row) throw new Error(`no ${entity} ${encoded}`);
  return row.id;
}

test('DELETE answers 204; the Scheme’s owned children go with it', async (t) => {
  const company = await create(stack, 'Companies', { Name: 'Stays' });
  const id = await create(stack, 'Schemes', {
    SchemeName: 'Doomed',
    Companies: [{ Company: { Id: company } }],
    Notes: [{ Text: 'n' }],
    Tags: [{ Name: 't' }],
    ExternalLinks: [{ Url: 'https://example.com' }],
    MarketBoundaries: [{ Market: { Id: london }, Geometry: 'POINT(0 0)' }],
  });
  const key = await keyOf('schemes', id, 'Scheme');
  const res = await del(`/Schemes/${id}`);
  t.is(res.status, 204, res.text);
  t.is(res.text, '');
  t.is((await stack.get(`/Schemes/${id}`)).status, 404);
  for (const table of [
    'scheme_companies',
    'scheme_notes',
    'scheme_tags',
    'scheme_external_links',
    'scheme_market_boundaries',
  ]) {
    t.is((await stack.knex(table).where({ scheme_id: key })).length, 0, table);
  }
  t.is((await stack.get(`/Companies/${company}`)).status, 200, 'a related (not owned) entity stays');
  assertProblem(t, await del(`/Schemes/${id}`), 404, 'Not Found', { detail: `Scheme '${id}' does not exist.` });
  t.is((await del('/Schemes/~~~~~~')).status, 404);
});

test('a row still referenced is a 409 naming the referrers', async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Referenced' });
  const development = await create(stack, 'Developments', { Name: 'Block A', Scheme: { Id: id } });
  const company = await create(stack, 'Companies', { Name: 'Occupier' });
  const occupier = await create(stack, 'OccupierEvents', {
    EventDate: '2024-01-01',
    Scheme: { Id: id },
    Company: { Id: company },
  });
  const expected = [
    `Scheme: still referenced by Development '${development}'`,
    `Scheme: still referenced by OccupierEvent '${occupier}'`,
  ];
  assertProblem(t, await del(`/Schemes/${id}`), 409, 'Conflict', { detail: expected[0], errors: expected });
  t.is((await stack.get(`/Schemes/${id}`)).status, 200);
  t.is((await del(`/Developments/${development}`)).status, 204);
  t.is((await del(`/OccupierEvents/${occupier}`)).status, 204);
  t.is((await del(`/Schemes/${id}`)).status, 204);
});

test('up to ten referrers are named, then a count of the rest', async (t) => {
  const company = await create(stack, 'Companies', { Name: 'Popular' });
  const schemes: string[] = [];
  for (let i = 0; i < 12; i++) {
    schemes.push(
      await create(stack, 'Schemes', { SchemeName: `Uses ${i}`, Companies: [{ Company: { Id: company } }] }),
    );
  }
  const links = (await stack
    .knex('scheme_companies')
    .where({ company_id: await keyOf('companies', company, 'Company') })
    .orderBy('id')) as {
    id: number;
  }[];
  const named = links
    .slice(0, 10)
    .map((l) => `Company: still referenced by SchemeCompany '${encodeId('SchemeCompany', l.id)}'`);
  const res = await del(`/Companies/${company}`);
  assertProblem(t, res, 409, 'Conflict', { detail: named[0], errors: [...named, 'Company: and 2 more referrers'] });
});

test('deleting an owned row through its own route moves the parent’s ETag', async (t) => {
  const company = await create(stack, 'Companies', { Name: 'Partner' });
  const id = await create(stack, 'Schemes', {
    SchemeName: 'Partnered',
    Companies: [{ Company: { Id: company } }, { Company: { Id: company }, Role: 'Second' }],
  });
  const before = await stack.get(`/Schemes/${id}?$expand=Companies`);
  const [first, second] = (before.body as Doc).Companies as Doc[];
  t.is((await del(`/SchemeCompanies/${first!.Id as string}`)).status, 204);
  const after = await stack.get(`/Schemes/${id}?$expand=Companies`);
  t.not(after.headers.get('etag'), before.headers.get('etag'));
  t.deepEqual(
    ((after.body as Doc).Companies as Doc[]).map((c) => c.Id),
    [second!.Id],
  );
  t.like(await read(stack, `/Companies/${company}`), { Name: 'Partner' });
});

test('reference data can be deleted once nothing uses it', async (t) => {
  const country = await create(stack, 'Countries', { Name: 'Shortlived', IsoCode: 'SL' });
  const market = await create(stack, 'Markets', { Name: 'Shortlived Market', Country: { Id: country } });
  assertProblem(t, await del(`/Countries/${country}`), 409, 'Conflict', {
    detail: `Country: still referenced by Market '${market}'`,
    errors: [`Country: still referenced by Market '${market}'`],
  });
  t.is((await del(`/Markets/${market}`)).status, 204);
  t.is((await del(`/Countries/${country}`, { 'if-match': '"1"' })).status, 204);
});
