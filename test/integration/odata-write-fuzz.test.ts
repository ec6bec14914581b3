import test from 'ava';
import fc from 'fast-check';
import { enc } from '../support/fixtures';
import { startStack, type Stack } from '../support/stack';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { create } from '../support/writes';

/**
 * A property over `/odata` write requests (DESIGN §17), beside odata-fuzz.test.ts (reads): generated
 * POST, PATCH, PUT and DELETE bodies — members of the type and others, `@odata.bind` in good and
 * bad forms, annotations, owned collections with bound items, wrong types, `__proto__`, long text —
 * with OData headers and media types never answer a 5xx; every 4xx is an OData error; and a write
 * that fails leaves nothing behind (no row, no item, no version bump, no event). Each answer also
 * passes the contract check against `$metadata`.
 */

let stack: Stack;
let ids: { schemes: string[]; address: string; company: string; market: string };
test.before(async () => {
  stack = await startStack({ workers: [(config) => startCommandWorker(config)] });
  const address = await create(stack, 'Addresses', { AddressLine: 'Fuzz Street' });
  const company = await create(stack, 'Companies', { Name: 'Fuzz Co' });
  const market = await create(stack, 'Markets', { Name: 'Fuzz Market' });
  const schemes = [
    await create(stack, 'Schemes', { SchemeName: 'Fuzz A', Address: { Id: address }, Notes: [{ Text: 'n' }] }),
    await create(stack, 'Schemes', { SchemeName: 'Fuzz B' }),
  ];
  ids = { schemes, address, company, market };
});
test.after.always(async () => {
  await stack?.close();
});

/** What a failed write must not change: every table a Scheme write reaches, versions, and the outbox. */
async function stateOf(): Promise<string> {
  const tables = [
    'schemes',
    'scheme_notes',
    'scheme_tags',
    'scheme_external_links',
    'scheme_market_boundaries',
    'scheme_companies',
    'companies',
    'addresses',
    'outbox',
  ];
  const counts = await Promise.all(tables.map((table) => stack.knex(table).count({ n: '*' }).first()));
  const versions = await stack.knex('schemes').sum({ v: 'version' }).first();
  return JSON.stringify([counts, versions]);
}

const text = fc.oneof(
  fc.constantFrom('Fuzzed', '', 'x'.repeat(301), 'a\u0000b', '\uD800'),
  fc.string({ maxLength: 12 }),
);
const scalar = fc.oneof(text, fc.integer({ min: -5, max: 2 ** 33 }), fc.double(), fc.boolean(), fc.constant(null));
const bindValue = () =>
  fc.oneof(
    fc.constantFrom(
      `Addresses('${ids.address}')`,
      `Addresses/${ids.address}`,
      `http://h/odata/Addresses('${ids.address}')`,
      `Addresses('${enc('Address', 99999)}')`,
      `Companies('${ids.company}')`,
      'Addresses',
      "Addresses('')",
      "Addresses('%zz')",
      '$1',
      '',
    ),
    fc.constant(null),
    scalar,
    fc.array(fc.constant(`Addresses('${ids.address}')`), { maxLength: 2 }),
  );
const item = () =>
  fc.dictionary(
    fc.constantFrom('Text', 'Name', 'Url', 'Title', 'Role', 'PercentageShare', 'Geometry', 'Id', '@odata.type', 'Nope'),
    fc.oneof(scalar, fc.constant('POLYGON((0 0, 1 0, 1 1, 0 0))'), fc.constant('https://example.com')),
    { maxKeys: 4 },
  );
const boundItem = () =>
  fc
    .tuple(item(), fc.constantFrom('Company@odata.bind', 'Market@odata.bind', 'Scheme@odata.bind'), bindValue())
    .map(([it, name, value]) => ({ ...it, [name]: value }));
const member = () =>
  fc.oneof(
    fc.tuple(fc.constantFrom('SchemeName', 'Name', 'AddressLine', 'TotalUnits', 'CompletionDate', 'Website'), scalar),
    fc.tuple(
      fc.constantFrom('Address@odata.bind', 'Market@odata.bind', 'Developments@odata.bind', 'Nope@odata.bind'),
      bindValue(),
    ),
    fc.tuple(
      fc.constantFrom('Address', 'Country'),
      fc.oneof(fc.constant({ Id: ids.address }), fc.constant({ '@odata.id': 'x' }), scalar),
    ),
    fc.tuple(
      fc.constantFrom('Notes', 'Tags', 'ExternalLinks', 'MarketBoundaries', 'Companies', 'Developments'),
      fc.oneof(fc.array(fc.oneof(item(), boundItem(), scalar), { maxLength: 3 }), scalar),
    ),
    fc.tuple(
      fc.constantFrom('@odata.type', '@odata.etag', '@odata.context', 'SchemeName@odata.type', '@Core.Messages'),
      fc.oneof(
        fc.constantFrom('#EntityManagement.Scheme', '#EntityManagement.Company', 'EntityManagement.Address'),
        scalar,
      ),
    ),
    fc.tuple(fc.constantFrom('Id', 'CreatedAt', '__proto__', 'constructor', 'Nope'), scalar),
  );
const wild = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.array(member(), { maxLength: 6 }).map((pairs) => pairJson(pairs)) },
    { weight: 1, arbitrary: fc.constantFrom('[]', 'null', '"x"', '{', '{"Name": "ok"}', '') },
  );
/** Bodies a set takes (most succeed), so that what a success leaves is exercised too. */
const validScheme = () =>
  fc
    .record(
      {
        SchemeName: fc.constantFrom('Fuzzed', 'Fuzzed again'),
        TotalUnits: fc.option(fc.nat({ max: 1000 })),
        'Address@odata.bind': fc.option(fc.constant(`Addresses('${ids.address}')`)),
        Notes: fc.array(fc.record({ Text: fc.constantFrom('a', 'b') }), { maxLength: 2 }),
        '@odata.type': fc.constant('#EntityManagement.Scheme'),
      },
      { requiredKeys: ['SchemeName'] },
    )
    .map((value) => JSON.stringify(value));
const validCompany = () =>
  fc
    .record({ Name: fc.constantFrom('Fuzz Co 2', 'Other Co'), Website: fc.constant(null) }, { requiredKeys: ['Name'] })
    .map((value) => JSON.stringify(value));

/** JSON text of the members (as text: `__proto__` stays a member, as a client would send it). */
function pairJson(pairs: [string, unknown][]): string {
  return `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`;
}

const keyForm = fc.constantFrom(
  (k: string) => `('${k}')`,
  (k: string) => `/${k}`,
  (k: string) => `(Id='${k}')`,
);
/** The set itself or one of its entities (existing, missing, malformed) in every key form. */
const pathIn = (set: string, keys: string[]) =>
  fc.oneof(
    fc.constant(`/${set}`),
    fc.tuple(fc.constantFrom(...keys), keyForm).map(([key, form]) => `/${set}${form(key)}`),
  );
const target = () =>
  fc.oneof(
    fc.tuple(
      pathIn('Schemes', [...ids.schemes, enc('Scheme', 99999), 'x']),
      fc.oneof({ weight: 3, arbitrary: validScheme() }, { weight: 2, arbitrary: wild() }),
    ),
    fc.tuple(
      pathIn('Companies', [ids.company, enc('Company', 99999)]),
      fc.oneof({ weight: 3, arbitrary: validCompany() }, { weight: 2, arbitrary: wild() }),
    ),
    fc.tuple(
      fc.oneof(pathIn('Activities', [enc('Activity', 1)]), fc.constantFrom('/Addresses', '/Nope', '/$metadata')),
      wild(),
    ),
  );
const headers = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        'content-type': fc.constantFrom(
          'application/json',
          'application/json;odata.metadata=minimal;IEEE754Compatible=true',
          'application/json-patch+json',
          'text/plain',
          'application/xml',
        ),
        prefer: fc.constantFrom(
          'return=minimal',
          'return=representation',
          'return=minimal, odata.continue-on-error',
          'x',
        ),
        'if-match': fc.constantFrom('*', '"1"', '"999"', 'W/"2"', 'nonsense'),
        accept: fc.constantFrom('application/json;odata.metadata=full', 'application/json;odata.metadata=bogus', '*/*'),
      },
      { requiredKeys: [] },
    ),
  },
);

test.serial(
  'generated /odata writes never answer a 5xx, every 4xx is an OData error, and a failure writes nothing',
  async (t) => {
    const stats = { ok: 0, clientErrors: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('POST', 'POST', 'PATCH', 'PATCH', 'PUT', 'DELETE'),
        target(),
        headers,
        async (method, [p, raw], h: Record<string, string>) => {
          const before = await stateOf();
          const res = await stack.request(method, `/odata${p}`, {
            raw: method === 'DELETE' ? undefined : raw,
            headers: { 'content-type': 'application/json', ...h },
          });
          const where = `${method} /odata${p} ${JSON.stringify(h)} ${raw.slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
          if (res.status >= 500 || res.status === 202) throw new Error(where);
          if (res.status >= 400) {
            stats.clientErrors++;
            if (!(res.body as { error?: { code?: unknown } } | undefined)?.error?.code)
              throw new Error(`not an OData error: ${where}`);
            if ((await stateOf()) !== before) throw new Error(`a failed write changed something: ${where}`);
          } else stats.ok++;
          return true;
        },
      ),
      { seed: 20261127, numRuns: 400, verbose: true },
    );
    t.log(`${stats.ok} written, ${stats.clientErrors} client errors`);
    t.true(stats.ok > 20 && stats.clientErrors > 50, 'both valid and invalid writes are generated');
  },
);
