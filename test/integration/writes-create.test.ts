import test from 'ava';
import fc from 'fast-check';
import { encodeId } from '../../domain/ids/id-codec';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { REPRESENTATION, assertProblem, create, idFromLocation, read, referenceId } from '../support/writes';

/** POST on several entity families (spec §4, §4.2, §7; DESIGN §4, §6, §10). */

type Doc = Record<string, unknown>;

let stack: Stack;
let gb: string;
let office: string;
let london: string;
test.before(async () => {
  stack = await startStack({ workers: [(config) => startCommandWorker(config)] });
  gb = await referenceId(stack, 'Country', 'countries', { iso_code: 'GB' });
  office = await referenceId(stack, 'BuildingType', 'building_types', { name: 'Office' });
  london = await referenceId(stack, 'Market', 'markets', { name: 'Central London' });
});
test.after.always(async () => {
  await stack?.close();
});

/** Rows of `table` matching `where` (tests in a file run concurrently: never count a whole table). */
const count = async (table: string, where: Record<string, unknown>) =>
  Number(((await stack.knex(table).where(where).count({ n: '*' }).first()) as { n: number }).n);

test('POST answers 201 with the encoded Location and no body unless a representation is asked for', async (t) => {
  const res = await stack.request('POST', '/Countries', { body: { Name: 'Atlantis', IsoCode: 'AT' } });
  t.is(res.status, 201, res.text);
  t.regex(res.headers.get('location') ?? '', /^\/Countries\/[A-Za-z0-9_-]{6}$/);
  t.is(res.text, '');
  t.is(res.headers.get('preference-applied'), null);
  t.is(res.headers.get('etag'), '"1"');
  const row = (await stack.knex('countries').where({ iso_code: 'AT' }).first()) as { id: number };
  t.is(idFromLocation(res), encodeId('Country', row.id));
  t.like(await read(stack, res.headers.get('location')!), { Name: 'Atlantis', IsoCode: 'AT' });
});

test('Prefer: return=representation (any case) returns the entity as a keyed GET shows it', async (t) => {
  for (const [prefer, iso] of [
    ['return=representation', 'RA'],
    ['RETURN=REPRESENTATION', 'RB'],
  ]) {
    const res = await stack.request('POST', '/Countries', {
      body: { Name: `Land ${iso}`, IsoCode: iso },
      headers: { prefer: prefer! },
    });
    t.is(res.status, 201, res.text);
    t.is(res.headers.get('preference-applied'), 'return=representation');
    t.deepEqual(res.body, await read(stack, res.headers.get('location')!));
  }
});

test('Prefer: return=minimal and any other value give 201 without a body', async (t) => {
  for (const [prefer, iso] of [
    ['return=minimal', 'MA'],
    ['return=representation, respond-async', 'MB'],
    ['representation', 'MC'],
  ]) {
    const res = await stack.request('POST', '/Countries', {
      body: { Name: prefer, IsoCode: iso },
      headers: { prefer: prefer! },
    });
    t.is(res.status, 201, `${prefer}: ${res.text}`);
    t.is(res.text, '', prefer);
    t.is(res.headers.get('preference-applied'), null, prefer);
  }
});

test('a Scheme with relations and every owned collection, kept in written order', async (t) => {
  const address = await create(stack, 'Addresses', { AddressLine: '1 Main St', City: 'London', Country: { Id: gb } });
  const acme = await create(stack, 'Companies', { Name: 'Acme', Website: 'https://acme.example' });
  const beta = await create(stack, 'Companies', { Name: 'Beta' });
  const res = await stack.request('POST', '/Schemes', {
    headers: REPRESENTATION,
    body: {
      SchemeName: 'River Quarter',
      TotalUnits: 250,
      TotalFloorArea: 12000.5,
      CompletionDate: '2027-06-30',
      Address: { Id: address },
      BuildingType: { Id: office },
      Market: { Id: london },
      Country: { Id: gb },
      Companies: [
        { Company: { Id: beta }, Role: 'Lender', PercentageShare: 0.25 },
        { Company: { Id: acme }, Role: 'Developer', PercentageShare: 0.75 },
      ],
      Notes: [{ Text: 'zeta' }, { Text: 'alpha' }],
      Tags: [{ Name: 'riverside' }, { Name: 'flagship' }],
      ExternalLinks: [{ Url: 'https://example.com/rq', Title: 'Brochure' }],
      MarketBoundaries: [{ Market: { Id: london }, Geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))' }],
    },
  });
  t.is(res.status, 201, res.text);
  const doc = res.body as Doc;
  t.like(doc, {
    SchemeName: 'River Quarter',
    TotalUnits: 250,
    TotalFloorArea: 12000.5,
    CompletionDate: '2027-06-30',
    Address: { Id: address },
    BuildingType: { Id: office },
    Market: { Id: london },
    Country: { Id: gb },
    DevelopmentType: null,
  });
  t.deepEqual(
    (doc.Notes as Doc[]).map((n) => n.Text),
    ['zeta', 'alpha'],
  );
  t.deepEqual(
    (doc.Tags as Doc[]).map((n) => n.Name),
    ['riverside', 'flagship'],
  );
  t.like((doc.ExternalLinks as Doc[])[0]!, { Url: 'https://example.com/rq', Title: 'Brochure' });
  t.like((doc.MarketBoundaries as Doc[])[0]!, { Market: { Id: london }, Geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))' });
  const expanded = await read(stack, `/Schemes/${doc.Id as string}?$expand=Companies`);
  t.deepEqual(
    (expanded.Companies as Doc[]).map((c) => [(c.Company as Doc).Id, c.Role, c.PercentageShare]),
    [
      [beta, 'Lender', 0.25],
      [acme, 'Developer', 0.75],
    ],
  );
});

test('other families: Address, Company, InvestmentEvent with Companies, Development', async (t) => {
  const address = await create(stack, 'Addresses', {
    AddressLine: '2 Quay',
    Postcode: 'D02',
    Latitude: 53.3,
    Longitude: -6.2,
    Country: { Id: gb },
  });
  t.like(await read(stack, `/Addresses/${address}`), { AddressLine: '2 Quay', Latitude: 53.3, Country: { Id: gb } });
  const buyer = await create(stack, 'Companies', { Name: 'Buyer Ltd', RegistrationNumber: 'B1', Country: { Id: gb } });
  const seller = await create(stack, 'Companies', { Name: 'Seller Ltd' });
  const scheme = await create(stack, 'Schemes', { SchemeName: 'Dock Yard' });
  const portfolio = await create(stack, 'Portfolios', { Name: 'Core', Description: 'long-hold' });
  const event = await create(stack, 'InvestmentEvents', {
    EventDate: '2025-01-31',
    Price: 1_500_000,
    Currency: 'GBP',
    Scheme: { Id: scheme },
    Portfolio: { Id: portfolio },
    Companies: [
      { Company: { Id: buyer }, Role: 'Buyer', PercentageShare: 1 },
      { Company: { Id: seller }, Role: 'Seller', PercentageShare: 1 },
    ],
  });
  const doc = await read(stack, `/InvestmentEvents/${event}?$expand=Companies`);
  t.like(doc, { EventDate: '2025-01-31', Price: 1_500_000, Currency: 'GBP', Scheme: { Id: scheme } });
  t.deepEqual(
    (doc.Companies as Doc[]).map((c) => [(c.Company as Doc).Id, c.Role, (c.InvestmentEvent as Doc).Id]),
    [
      [buyer, 'Buyer', event],
      [seller, 'Seller', event],
    ],
  );
  const development = await create(stack, 'Developments', { Name: 'Phase 1', Units: 40, Scheme: { Id: scheme } });
  t.like(await read(stack, `/Developments/${development}`), { Name: 'Phase 1', Units: 40, Scheme: { Id: scheme } });
  // Owned rows can also be created through their own route, placed after their siblings.
  const link = await create(stack, 'InvestmentCompanies', {
    InvestmentEvent: { Id: event },
    Company: { Id: buyer },
    Role: 'Advisor',
  });
  const after = await read(stack, `/InvestmentEvents/${event}?$expand=Companies`);
  t.deepEqual(
    (after.Companies as Doc[]).map((c) => c.Id),
    [...(doc.Companies as Doc[]).map((c) => c.Id), link],
  );
});

test('read-only members in a POST body are ignored', async (t) => {
  const res = await stack.request('POST', '/Companies', {
    headers: REPRESENTATION,
    body: { Id: 'AAAAAA', CreatedAt: '1999-01-01T00:00:00.000Z', UpdatedAt: 'not even a date', Name: 'Ignored Ltd' },
  });
  t.is(res.status, 201, res.text);
  const doc = res.body as Doc;
  t.not(doc.Id, 'AAAAAA');
  t.is(doc.Id, idFromLocation(res));
  t.true((doc.CreatedAt as string) > '2000');
});

test('validation failures: exact problem shape, every message, nothing created', async (t) => {
  const company = await create(stack, 'Companies', { Name: 'Share Co' });
  assertProblem(
    t,
    await stack.request('POST', '/Schemes', {
      body: { SchemeName: 'X', Companies: [{ Company: { Id: company }, PercentageShare: 1.5 }] },
    }),
    400,
    'Validation Failed',
    { errors: ['Scheme.Companies[0].PercentageShare: must be between 0 and 1'] },
  );
  assertProblem(t, await stack.request('POST', '/Schemes', { body: {} }), 400, 'Validation Failed', {
    errors: ['Scheme.SchemeName: is required'],
  });
  assertProblem(t, await stack.request('POST', '/Schemes', { body: { SchemeName: null } }), 400, 'Validation Failed', {
    errors: ['Scheme.SchemeName: is required'],
  });
  assertProblem(
    t,
    await stack.request('POST', '/Schemes', {
      body: { SchemeName: 'X', Foo: 1, Notes: [{ Text: 'a', Colour: 'red' }] },
    }),
    400,
    'Validation Failed',
    { errors: ['Scheme.Foo: is not a known field', 'Scheme.Notes[0].Colour: is not a known field'] },
  );
  assertProblem(
    t,
    await stack.request('POST', '/Schemes', {
      body: {
        SchemeName: 'x'.repeat(301),
        TotalUnits: 1.5,
        TotalFloorArea: -1,
        CompletionDate: '2024-02-30',
        Address: 'abc',
        Tags: [{ Name: '' }],
        ExternalLinks: [{ Url: 'ftp://example.com' }],
        MarketBoundaries: [{ Market: { Id: london }, Geometry: 'POINT(1 2) trailing' }],
      },
    }),
    400,
    'Validation Failed',
    {
      errors: [
        'Scheme.SchemeName: must be at most 300 characters',
        'Scheme.TotalUnits: must be an integer',
        'Scheme.TotalFloorArea: must be at least 0',
        'Scheme.CompletionDate: must be a date (YYYY-MM-DD)',
        'Scheme.Address: must be an object with an Id, or null',
        'Scheme.MarketBoundaries[0].Geometry: is not valid WKT',
        'Scheme.Tags[0].Name: must not be empty',
        'Scheme.ExternalLinks[0].Url: must be an absolute http(s) URL',
      ],
    },
  );
  assertProblem(
    t,
    await stack.request('POST', '/Countries', { body: { Name: 'Lower', IsoCode: 'gb' } }),
    400,
    'Validation Failed',
    {
      errors: ['Country.IsoCode: must be 2 upper-case letters'],
    },
  );
  assertProblem(
    t,
    await stack.request('POST', '/InvestmentEvents', {
      body: { EventDate: '2024-01-01', Currency: 'gbp', Price: 'lots' },
    }),
    400,
    'Validation Failed',
    { errors: ['InvestmentEvent.Price: must be a number', 'InvestmentEvent.Currency: must be 3 upper-case letters'] },
  );
  assertProblem(
    t,
    await stack.request('POST', '/Schemes', { body: [{ SchemeName: 'in an array' }] }),
    400,
    'Validation Failed',
    {
      errors: ['Scheme: must be a JSON object'],
    },
  );
  t.is(await count('schemes', { scheme_name: 'X' }), 0);
});

test('a related entity that does not exist (or cannot be decoded) is a 400 naming it', async (t) => {
  const missing = encodeId('Address', 999_999);
  assertProblem(
    t,
    await stack.request('POST', '/Schemes', {
      body: {
        SchemeName: 'Orphan',
        Address: { Id: missing },
        BuildingType: { Id: 'nope!' },
        Companies: [{ Company: { Id: encodeId('Company', 888_888) } }],
      },
    }),
    400,
    'Validation Failed',
    {
      errors: [
        `Scheme.Address.Id: Address '${missing}' does not exist`,
        "Scheme.BuildingType.Id: BuildingType 'nope!' does not exist",
        `Scheme.Companies[0].Company.Id: Company '${encodeId('Company', 888_888)}' does not exist`,
      ],
    },
  );
  // An Id of another type names no row of this one.
  const scheme = await create(stack, 'Schemes', { SchemeName: 'Not an address' });
  const res = await stack.request('POST', '/Schemes', { body: { SchemeName: 'Wrong type', Address: { Id: scheme } } });
  t.is(res.status, 400);
});

test('a POST whose related rows are checked with its insert inserts nothing when one is missing', async (t) => {
  // Every Id decodes and the Scheme has no unique value: the check and the insert are one statement.
  const address = await create(stack, 'Addresses', { AddressLine: '1 Checked Street', Country: { Id: gb } });
  const company = await create(stack, 'Companies', { Name: 'Checked Co' });
  const missingAddress = encodeId('Address', 999_998);
  const missingCompany = encodeId('Company', 888_887);
  const cases: [Doc, string[]][] = [
    [
      { Address: { Id: missingAddress }, BuildingType: { Id: office } },
      [`Scheme.Address.Id: Address '${missingAddress}' does not exist`],
    ],
    [
      { Address: { Id: address }, Companies: [{ Company: { Id: company } }, { Company: { Id: missingCompany } }] },
      [`Scheme.Companies[1].Company.Id: Company '${missingCompany}' does not exist`],
    ],
  ];
  for (const [i, [relations, errors]] of cases.entries()) {
    const name = `Checked with its insert ${i}`;
    const res = await stack.request('POST', '/Schemes', { body: { SchemeName: name, ...relations } });
    assertProblem(t, res, 400, 'Validation Failed', { errors });
    t.is(await count('schemes', { scheme_name: name }), 0);
  }
  const res = await stack.request('POST', '/Schemes', {
    body: {
      SchemeName: 'Checked with its insert',
      Address: { Id: address },
      BuildingType: { Id: office },
      Companies: [{ Company: { Id: company }, Role: 'Developer' }],
    },
    headers: { prefer: 'return=representation' },
  });
  t.is(res.status, 201, res.text);
  t.like(res.body as Doc, { Address: { Id: address }, BuildingType: { Id: office } });
  const expanded = await read(stack, `/Schemes/${(res.body as Doc).Id as string}?$expand=Companies`);
  t.like((expanded.Companies as Doc[])[0], { Company: { Id: company }, Role: 'Developer' });
});

test('property: a POST naming any mix of existing and missing rows is created exactly when all exist, else a 400 naming each missing one', async (t) => {
  const address = await create(stack, 'Addresses', { AddressLine: '2 Checked Street', Country: { Id: gb } });
  const company = await create(stack, 'Companies', { Name: 'Property Co' });
  const existing: Record<string, string> = { Address: address, BuildingType: office, Market: london, Country: gb };
  const types = Object.keys(existing);
  // Per relation: left out, the existing row, or a key no row of that type has (decodable, so the
  // check and the insert go as one statement, db/commands/integrity-checks.ts).
  const choice = fc.oneof(
    fc.constant('none' as const),
    fc.constant('existing' as const),
    fc.integer({ min: 900_000, max: 2_147_483_647 }),
  );
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.record(Object.fromEntries(types.map((type) => [type, choice]))),
      fc.array(choice, { maxLength: 3 }),
      async (relations, companies) => {
        const name = `Property ${n++}`;
        const body: Doc = { SchemeName: name };
        const missing: string[] = [];
        for (const type of types) {
          const pick = relations[type]!;
          if (pick === 'none') continue;
          const id = pick === 'existing' ? existing[type]! : encodeId(type, pick);
          body[type] = { Id: id };
          if (pick !== 'existing') missing.push(`Scheme.${type}.Id: ${type} '${id}' does not exist`);
        }
        body.Companies = companies
          .filter((pick) => pick !== 'none')
          .map((pick, i) => {
            const id = pick === 'existing' ? company : encodeId('Company', pick);
            if (pick !== 'existing') missing.push(`Scheme.Companies[${i}].Company.Id: Company '${id}' does not exist`);
            return { Company: { Id: id } };
          });
        const res = await stack.request('POST', '/Schemes', { body });
        if (missing.length === 0) {
          if (res.status !== 201) return false;
        } else {
          assertProblem(t, res, 400, 'Validation Failed', { errors: missing });
        }
        return (await count('schemes', { scheme_name: name })) === (missing.length === 0 ? 1 : 0);
      },
    ),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 60), seed: 20261127 },
  );
  t.pass();
});

test('duplicate unique values are 409 conflicts', async (t) => {
  assertProblem(
    t,
    await stack.request('POST', '/Countries', { body: { Name: 'Britain again', IsoCode: 'GB' } }),
    409,
    'Conflict',
    {
      detail: "Country.IsoCode: 'GB' is already used",
      errors: ["Country.IsoCode: 'GB' is already used"],
    },
  );
  assertProblem(t, await stack.request('POST', '/BuildingTypes', { body: { Name: 'Office' } }), 409, 'Conflict', {
    detail: "BuildingType.Name: 'Office' is already used",
    errors: ["BuildingType.Name: 'Office' is already used"],
  });
});

test('media types: POST takes application/json only', async (t) => {
  const body = JSON.stringify({ SchemeName: 'Typed' });
  for (const type of ['text/plain', 'application/json-patch+json', 'application/x-www-form-urlencoded']) {
    const res = await stack.request('POST', '/Schemes', { raw: body, headers: { 'content-type': type } });
    assertProblem(t, res, 415, 'Unsupported Media Type', { detail: 'POST and PUT take application/json.' });
  }
  const charset = await stack.request('POST', '/Schemes', {
    raw: body,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  t.is(charset.status, 201);
});

test('Idempotency-Key: a repeat returns the first result and creates nothing; another body is a 409', async (t) => {
  const key = { 'idempotency-key': 'create-harbour-1' };
  const first = await stack.request('POST', '/Schemes', { body: { SchemeName: 'Harbour' }, headers: key });
  t.is(first.status, 201, first.text);
  const again = await stack.request('POST', '/Schemes', {
    body: { SchemeName: 'Harbour' },
    headers: { ...key, ...REPRESENTATION },
  });
  t.is(again.status, 201, again.text);
  t.is(again.headers.get('location'), first.headers.get('location'));
  t.like(again.body as Doc, { Id: idFromLocation(first), SchemeName: 'Harbour' });
  t.is(await count('schemes', { scheme_name: 'Harbour' }), 1);

  assertProblem(
    t,
    await stack.request('POST', '/Schemes', { body: { SchemeName: 'Other' }, headers: key }),
    409,
    'Conflict',
    {
      detail: 'Idempotency-Key: was already used for a different request',
      errors: ['Idempotency-Key: was already used for a different request'],
    },
  );
  t.is(await count('schemes', { scheme_name: 'Harbour' }), 1);

  // Concurrent repeats of a new key still create one row.
  const racing = { 'idempotency-key': 'create-harbour-2' };
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      stack.request('POST', '/Schemes', { body: { SchemeName: 'Race' }, headers: racing }),
    ),
  );
  t.deepEqual(
    results.map((r) => r.status),
    [201, 201, 201, 201, 201],
  );
  t.is(new Set(results.map((r) => r.headers.get('location'))).size, 1);
  t.is(await count('schemes', { scheme_name: 'Race' }), 1);

  assertProblem(
    t,
    await stack.request('POST', '/Schemes', {
      body: { SchemeName: 'x' },
      headers: { 'idempotency-key': 'x'.repeat(256) },
    }),
    400,
    'Bad Request',
    {
      detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
    },
  );
});

test('writes on an unknown route are 404 problems; read models refuse writes with 405', async (t) => {
  const res = await stack.request('POST', '/Nothings', { body: { Name: 'x' } });
  t.is(res.status, 404);
  t.like(res.body as Doc, { type: 'about:blank', title: 'Not Found', status: 404 });
  const readOnly = await stack.request('POST', '/Activities', { body: { EventType: 'x' } });
  assertProblem(t, readOnly, 405, 'Method Not Allowed', { detail: '/Activities is read-only.' });
  t.is(readOnly.headers.get('allow'), 'GET');
});
