import test from 'ava';
import fc from 'fast-check';
import { encodeId } from '../../domain/ids/id-codec';
import { ENTITIES, Scheme } from '../../domain/entities';
import { reindex } from '../../db/search/search-indexer';
import { startStack, type Stack } from '../support/stack';
import { parseCsv } from '../support/csv';
import { checkedFetch } from '../support/contract';

/**
 * /Export: CSV and NDJSON, filters and ordering, far more rows than a page, and clients leaving early.
 * One test at a time: an API process runs a few exports at once (exportConcurrencyFor) and answers
 * the next a 503, which a loaded machine reached with nine tests at once.
 */

let stack: Stack;
test.before(async () => {
  // 12 connections: up to 6 exports at once (half the pool), the rest left to reads.
  // Tests here run at once as one caller: the per-caller export cap is not what they check.
  stack = await startStack({ workers: [], env: { DB_POOL_MAX: '12', MAX_EXPORTS_PER_SUBJECT: '100' } });
});
test.after.always(async () => {
  await stack?.close();
});

const SCHEME_HEADER = [
  'Id',
  'SchemeName',
  'TotalUnits',
  'TotalFloorArea',
  'CompletionDate',
  'CreatedAt',
  'UpdatedAt',
  'AddressId',
  'BuildingTypeId',
  'DevelopmentTypeId',
  'DevelopmentStatusId',
  'MarketId',
  'CountryId',
];

async function insertScheme(values: Record<string, unknown>): Promise<number> {
  const [row] = await stack.knex('schemes').insert(values).returning('id');
  return (row as { id: number }).id;
}

/** A raw download: the stack's helper would try to parse NDJSON as one JSON document. */
async function download(path: string, accept?: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await checkedFetch(`${stack.baseUrl}${path}`, { headers: accept ? { accept } : {} });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function csvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((row) => Object.fromEntries(header!.map((name, i) => [name, row[i]!])));
}

test.serial('CSV: header in definition order with Id first, relations as <Relation>Id, RFC 4180 quoting', async (t) => {
  const [address] = await stack.knex('addresses').insert({ address_line: '1 Quay St' }).returning('id');
  const addressId = (address as { id: number }).id;
  const tricky = 'Smith, "The Yard"\nPhase 2';
  const id = await insertScheme({
    scheme_name: tricky,
    total_units: 12,
    total_floor_area: 1250.5,
    completion_date: '2027-03-31',
    address_id: addressId,
  });
  const res = await stack.get(`/Export/Schemes?$filter=Id eq '${encodeId('Scheme', id)}'`);
  t.is(res.status, 200, res.text);
  t.is(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.is(res.headers.get('content-disposition'), 'attachment; filename="Schemes.csv"');
  t.true(res.text.startsWith(`${SCHEME_HEADER.join(',')}\r\n`));
  t.true(res.text.includes('"Smith, ""The Yard""\nPhase 2"'));

  const [record] = csvRecords(res.text);
  const keyed = (await stack.get(`/Schemes/${id}`)).body as Record<string, unknown>;
  t.deepEqual(record, {
    Id: encodeId('Scheme', id),
    SchemeName: tricky,
    TotalUnits: '12',
    TotalFloorArea: '1250.5',
    CompletionDate: '2027-03-31',
    CreatedAt: keyed.CreatedAt as string,
    UpdatedAt: keyed.UpdatedAt as string,
    AddressId: encodeId('Address', addressId),
    BuildingTypeId: '',
    DevelopmentTypeId: '',
    DevelopmentStatusId: '',
    MarketId: '',
    CountryId: '',
  });
  t.deepEqual(keyed.Address, { Id: record!.AddressId });
});

/** Companies tagged by RegistrationNumber, exported as CSV in key order: [Name] per record, header dropped. */
async function exportedCompanyNames(tag: string, names: string[]): Promise<string[][]> {
  if (names.length) {
    await stack.knex('companies').insert(names.map((name) => ({ name, registration_number: tag })));
  }
  const res = await download(`/Export/Companies?$filter=RegistrationNumber eq '${tag}'`);
  if (res.status !== 200) throw new Error(`export answered ${res.status}: ${res.text}`);
  const [header, ...rows] = parseCsv(res.text);
  const name = header!.indexOf('Name');
  return rows.map((row) => [row[name]!, row.length === header!.length ? 'whole' : `${row.length} cells`]);
}

/** A cell a spreadsheet may run as a formula (DESIGN §13, and the full-width forms csv-stringify also escapes). */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const escapedCell = (text: string) => (FORMULA_START.test(text) ? `'${text}` : text);

test.serial(
  'CSV: a bare LF or CR in a name is quoted, so "a\\n=1+1" stays one record and no cell is a formula',
  async (t) => {
    const names = ['a\n=1+1', '\r=1+1', 'a\r=1+1', '\n@SUM(A1)', 'x,\r\n-2+3'];
    const exported = await exportedCompanyNames('csv-breaks', names);
    t.deepEqual(
      exported,
      names.map((name) => [escapedCell(name), 'whole']),
    );
    t.deepEqual(
      exported.map(([cell]) => cell!.charAt(0)),
      ['a', "'", 'a', '\n', 'x'],
    );
  },
);

test.serial(
  'CSV property over HTTP: arbitrary names come back one record each, as written or behind a quote mark',
  async (t) => {
    const name = fc.string({
      unit: fc.oneof(
        fc.constantFrom('"', ',', '\r', '\n', '=', '+', '-', '@', '\t', "'", '\uFF1D', '😀'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 2 }).filter((s) => !s.includes('\u0000')),
      ),
      minLength: 1,
      maxLength: 20,
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(name, { minLength: 1, maxLength: 4 }), async (names) => {
        const exported = await exportedCompanyNames(`csv-prop-${run++}`, names);
        t.deepEqual(
          exported,
          names.map((text) => [escapedCell(text), 'whole']),
        );
        for (const [cell] of exported) t.false(FORMULA_START.test(cell!), JSON.stringify(cell));
      }),
      { numRuns: 40 },
    );
  },
);

test.serial('CSV is the default for */* and text/csv; NDJSON on request; anything else is 406', async (t) => {
  const filter = `$filter=SchemeName eq 'no such scheme'`;
  for (const accept of ['*/*', 'text/csv', 'text/*', 'application/x-ndjson;q=0.5, text/csv']) {
    const res = await stack.get(`/Export/Schemes?${filter}`, { accept });
    t.is(res.headers.get('content-type'), 'text/csv; charset=utf-8', accept);
    t.is(res.text, `${SCHEME_HEADER.join(',')}\r\n`);
  }
  const ndjson = await download(`/Export/Schemes?${filter}`, 'application/x-ndjson');
  t.is(ndjson.headers.get('content-type'), 'application/x-ndjson');
  t.is(ndjson.text, '');
  const json = await stack.get('/Export/Schemes', { accept: 'application/json' });
  t.is(json.status, 406);
  t.like(json.body as object, { type: 'about:blank', title: 'Not Acceptable', status: 406 });
});

test.serial('NDJSON: one entity per line, as a keyed read shows it, owned collections included', async (t) => {
  const id = await insertScheme({ scheme_name: 'ndjson-scheme', total_units: 3 });
  const [company] = await stack.knex('companies').insert({ name: 'Builder & Co' }).returning('id');
  await stack.knex('scheme_notes').insert([
    { scheme_id: id, position: 0, text: 'first line\nsecond "quoted" line' },
    { scheme_id: id, position: 1, text: 'another' },
  ]);
  await stack.knex('scheme_tags').insert({ scheme_id: id, position: 0, name: 'riverside' });
  await stack
    .knex('scheme_companies')
    .insert({ scheme_id: id, company_id: (company as { id: number }).id, role: 'Developer', percentage_share: 0.6 });
  await insertScheme({ scheme_name: 'ndjson-other' });

  const res = await download(
    `/Export/Schemes?$filter=startswith(SchemeName,'ndjson-')&$orderby=SchemeName desc`,
    'application/x-ndjson',
  );
  t.is(res.status, 200);
  t.is(res.headers.get('content-disposition'), 'attachment; filename="Schemes.ndjson"');
  const lines = res.text.split('\n');
  t.is(lines.pop(), ''); // every line ends with \n
  const docs = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  t.deepEqual(
    docs.map((d) => d.SchemeName),
    ['ndjson-scheme', 'ndjson-other'],
  );
  const keyed = await stack.get(`/Schemes/${id}?$expand=Companies`);
  t.deepEqual(docs[0], keyed.body);
  t.is((docs[0]!.Companies as unknown[]).length, 1);
  t.is((docs[0]!.Notes as unknown[]).length, 2);
  t.deepEqual(docs[1]!.Companies, []);
});

test.serial('$filter and $orderby are honoured, with the key breaking ties', async (t) => {
  const rows = [
    ['order-a', 30],
    ['order-b', 10],
    ['order-c', 20],
    ['order-d', 20],
    ['order-e', 5],
  ] as const;
  const ids = new Map<string, number>();
  for (const [name, units] of rows) ids.set(name, await insertScheme({ scheme_name: name, total_units: units }));
  const res = await stack.get(
    `/Export/Schemes?$filter=startswith(SchemeName,'order-') and TotalUnits ge 10&$orderby=TotalUnits desc`,
  );
  const records = csvRecords(res.text);
  // order-c and order-d tie on 20: the key breaks the tie in the ordering's direction (descending).
  t.deepEqual(
    records.map((r) => r.SchemeName),
    ['order-a', 'order-d', 'order-c', 'order-b'],
  );
  t.deepEqual(
    records.map((r) => r.Id),
    ['order-a', 'order-d', 'order-c', 'order-b'].map((name) => encodeId('Scheme', ids.get(name)!)),
  );
});

test.serial('$search selects rows as on list reads, by relevance when no $orderby is given', async (t) => {
  const ids = [
    await insertScheme({ scheme_name: 'searchx riverside tower' }),
    await insertScheme({ scheme_name: 'searchx plain block' }),
    await insertScheme({ scheme_name: 'searchx tower tower' }),
  ];
  await reindex(stack.knex, Scheme, ids); // what the views worker does after each write
  const path = `/Export/Schemes?$filter=startswith(SchemeName,'searchx')&$search=tower`;
  const exported = csvRecords((await download(path)).text).map((r) => r.SchemeName);
  const listed = ((await stack.get(path.replace('/Export', ''))).body as { SchemeName: string }[]).map(
    (r) => r.SchemeName,
  );
  t.deepEqual(exported.slice().sort(), ['searchx riverside tower', 'searchx tower tower']);
  t.deepEqual(exported, listed);
});

test.serial(
  'a whole-table NDJSON export (collections merge-joined) has exactly the lines of the general path',
  async (t) => {
    // Serial: no other test writes while the two exports are compared.
    const [company] = (await stack.knex('companies').insert({ name: 'Merge & Join' }).returning('id')) as {
      id: number;
    }[];
    const [market] = (await stack.knex('markets').insert({ name: 'Merge Market' }).returning('id')) as { id: number }[];
    for (let i = 0; i < 3; i++) {
      const id = await insertScheme({ scheme_name: `whole-${i}`, total_units: i });
      if (i === 1) continue; // one scheme with every collection empty
      await stack.knex('scheme_notes').insert([
        { scheme_id: id, position: 1, text: 'second' },
        { scheme_id: id, position: 0, text: 'first' },
      ]);
      await stack.knex('scheme_tags').insert({ scheme_id: id, position: 0, name: `tag-${i}` });
      await stack.knex('scheme_companies').insert([
        { scheme_id: id, company_id: company!.id, role: 'Developer', percentage_share: 0.5, position: 1 },
        { scheme_id: id, company_id: company!.id, role: 'Owner', percentage_share: 0.5, position: 0 },
      ]);
      await stack
        .knex('scheme_external_links')
        .insert({ scheme_id: id, position: 0, url: 'https://example.com/a', title: 'A' });
      await stack
        .knex('scheme_market_boundaries')
        .insert({ scheme_id: id, market_id: market!.id, position: 0, geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))' });
    }
    const whole = await download('/Export/Schemes', 'application/x-ndjson');
    // Ordering by Id explicitly takes the general path (one correlated lookup per row and collection).
    const general = await download('/Export/Schemes?$orderby=Id', 'application/x-ndjson');
    t.is(whole.status, 200);
    t.is(whole.text, general.text);
    const docs = whole.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown[]> & { SchemeName: string });
    const withAll = docs.find((d) => d.SchemeName === 'whole-0')!;
    t.deepEqual(
      (withAll.Notes as { Text: string }[]).map((n) => n.Text),
      ['first', 'second'],
      'written order kept',
    );
    for (const name of ['Tags', 'Companies', 'ExternalLinks', 'MarketBoundaries'])
      t.true(withAll[name]!.length > 0, name);
    t.deepEqual(docs.find((d) => d.SchemeName === 'whole-1')!.Notes, []);
  },
);

test.serial('every NDJSON line has the bytes of the keyed read with the owned collections expanded', async (t) => {
  // Serial: the whole-table exports below must not see rows another test is still writing.
  // Values whose JSON form is easy to get wrong when lines are built as text: escapes, non-ASCII,
  // NaN / Infinity / -0 / exponents, an infinite date, microseconds, nulls, items out of written order.
  const [company] = (await stack.knex('companies').insert({ name: 'Bytes "Ltd"' }).returning('id')) as { id: number }[];
  const [market] = (await stack.knex('markets').insert({ name: 'Bytes Market' }).returning('id')) as { id: number }[];
  const odd = ['NaN', 'Infinity', '-0', '1e-7', '1.2345678901234567e+21', null];
  const ids: number[] = [];
  for (let i = 0; i < odd.length; i++) {
    ids.push(
      await insertScheme({
        scheme_name: `bytes-${i} "q" \\ \t\u0001 é 🏗 \u2028 ${'x'.repeat(i * 50)}`,
        total_units: i === 5 ? null : i,
        total_floor_area: odd[i],
        completion_date: i === 1 ? 'infinity' : i === 2 ? null : '2027-03-31',
        created_at: '2026-01-02T03:04:05.678901Z',
        market_id: i % 2 ? market!.id : null,
      }),
    );
  }
  for (const [i, id] of ids.entries()) {
    if (i === 3) continue; // every collection empty
    await stack.knex('scheme_notes').insert([
      { scheme_id: id, position: 2, text: `late\n"${i}"` },
      { scheme_id: id, position: 0, text: 'first' },
      { scheme_id: id, position: 1, text: 'tab\there' },
    ]);
    await stack.knex('scheme_tags').insert({ scheme_id: id, position: 0, name: `tag-${i}` });
    await stack.knex('scheme_companies').insert([
      { scheme_id: id, company_id: company!.id, role: null, percentage_share: odd[i], position: 1 },
      { scheme_id: id, company_id: company!.id, role: 'Owner', percentage_share: 0.1, position: 0 },
    ]);
    await stack
      .knex('scheme_external_links')
      .insert({ scheme_id: id, position: 0, url: 'https://e.x/?a=1&b="2"', title: null });
    await stack
      .knex('scheme_market_boundaries')
      .insert({ scheme_id: id, market_id: market!.id, position: 0, geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))' });
  }
  const owned = Object.entries(Scheme.collections)
    .filter(([, c]) => c.owned)
    .map(([name]) => name)
    .join(',');
  const keyedLine = async (route: string, id: string, expand: string) =>
    (await stack.get(`/${route}/${id}${expand ? `?$expand=${expand}` : ''}`)).text;

  // The whole-table path (collections merge-joined) and the general one (a filter: correlated).
  const whole = (await download('/Export/Schemes', 'application/x-ndjson')).text.trimEnd().split('\n');
  const filtered = (
    await download(`/Export/Schemes?$filter=startswith(SchemeName,'bytes-')`, 'application/x-ndjson')
  ).text
    .trimEnd()
    .split('\n');
  t.is(filtered.length, ids.length);
  for (const [i, id] of ids.entries()) {
    const keyed = await keyedLine('Schemes', encodeId('Scheme', id), owned);
    t.is(filtered[i], keyed, `filtered export, scheme ${i}`);
    t.true(whole.includes(keyed), `whole-table export, scheme ${i}`);
  }
  t.deepEqual(
    (JSON.parse(filtered[0]!) as { Notes: { Text: string }[] }).Notes.map((n) => n.Text),
    ['first', 'tab\there', 'late\n"0"'],
  );

  // Every other exported entity: its first lines against its keyed reads.
  for (const entity of ENTITIES.filter((e) => e !== Scheme)) {
    const expand = Object.entries(entity.collections)
      .filter(([, c]) => c.owned)
      .map(([name]) => name)
      .join(',');
    const res = await download(`/Export/${entity.route}`, 'application/x-ndjson');
    t.is(res.status, 200, entity.route);
    for (const line of res.text.split('\n').filter(Boolean).slice(0, 5)) {
      const { Id } = JSON.parse(line) as { Id: string };
      t.is(line, await keyedLine(entity.route, Id, expand), `${entity.route} ${Id}`);
    }
  }
});

test.serial('every one of 5,000 rows arrives once, in key order (no page cut)', async (t) => {
  await stack.knex.raw(
    `insert into schemes (scheme_name, total_units) select 'bulk-' || lpad(g::text, 5, '0'), g from generate_series(1, 5000) g`,
  );
  const expected = (
    await stack.knex('schemes').where('scheme_name', 'like', 'bulk-%').orderBy('id').select('id', 'scheme_name')
  ).map((row: { id: number; scheme_name: string }) => [encodeId('Scheme', row.id), row.scheme_name]);
  t.is(expected.length, 5000);

  const csv = csvRecords((await stack.get(`/Export/Schemes?$filter=startswith(SchemeName,'bulk-')`)).text);
  t.deepEqual(
    csv.map((r) => [r.Id, r.SchemeName]),
    expected,
  );

  const ndjson = await download(
    `/Export/Schemes?$filter=startswith(SchemeName,'bulk-')&$orderby=TotalUnits desc`,
    'application/x-ndjson',
  );
  const docs = ndjson.text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { Id: string; TotalUnits: number });
  t.is(docs.length, 5000);
  t.is(new Set(docs.map((d) => d.Id)).size, 5000);
  t.deepEqual(
    docs.map((d) => d.TotalUnits),
    Array.from({ length: 5000 }, (_, i) => 5000 - i),
  );
});

// Serial: the concurrent tests already hold up to the six exports this stack runs at once.
test.serial(
  'a read model is exported like any readable route: /Export/Activities as /Activities reads it',
  async (t) => {
    await stack.knex('activities').insert(
      ['export-a', 'export-b'].map((entityId, i) => ({
        event_id: `00000000-0000-4000-8000-00000000000${i}`,
        event_type: 'SchemeCreated',
        entity_type: 'Scheme',
        entity_id: entityId,
        subject: 'alice',
        occurred_at: `2026-11-2${i}T10:00:00.000Z`,
        changed_fields: JSON.stringify(['SchemeName', 'TotalUnits']),
      })),
    );
    const filter = `$filter=startswith(EntityId,'export-')`;
    const read = (await stack.get(`/Activities?${filter}`)).body as Record<string, unknown>[];
    t.is(read.length, 2);

    const csv = await download(`/Export/Activities?${filter}`);
    t.is(csv.status, 200, csv.text);
    t.is(csv.headers.get('content-disposition'), 'attachment; filename="Activities.csv"');
    const records = csvRecords(csv.text);
    t.deepEqual(Object.keys(records[0]!), [
      'Id',
      'EventType',
      'EntityType',
      'EntityId',
      'Subject',
      'OccurredAt',
      'ChangedFields',
    ]);
    t.deepEqual(
      records.map((r) => [r.Id, r.EntityId, r.OccurredAt]),
      read.map((r) => [r.Id, r.EntityId, r.OccurredAt]),
    );

    const ndjson = await download(`/Export/Activities?${filter}`, 'application/x-ndjson');
    t.is(ndjson.status, 200, ndjson.text);
    t.deepEqual(
      ndjson.text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
      read,
    );
  },
);

test.serial('bad requests are problems before any row is streamed', async (t) => {
  const cases: [string, number][] = [
    ['/Export/NoSuchEntities', 404],
    ['/Export/Schemes?$top=10', 400],
    ['/Export/Schemes?$skip=10', 400],
    ['/Export/Schemes?$count=true', 400],
    ['/Export/Schemes?$expand=Companies', 400],
    ['/Export/Schemes?$format=json', 400],
    ['/Export/Schemes?$filter=NoSuchField eq 1', 400],
    ['/Export/Schemes?$orderby=SchemeName sideways', 400],
    ['/Export/SchemeCompanies?$search=tower', 400],
    ['/Export/Schemes?searchFields=SchemeName', 400],
  ];
  for (const [path, status] of cases) {
    const res = await stack.get(path);
    t.is(res.status, status, path);
    t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8', path);
  }
});

/** Export statements still running on the server, other than the one asking. */
async function runningExports(): Promise<number> {
  const result = await stack.knex.raw<{ rows: { n: number }[] }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and state = 'active'
        and query like '%from companies r%'`,
  );
  return result.rows[0]!.n;
}

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** ~30 MB of CSV: far more than socket and stream buffers hold, so the server must wait on the client. */
async function insertManyCompanies(): Promise<void> {
  const [{ n }] = (await stack.knex('companies').count('* as n')) as [{ n: number }];
  if (n >= 30000) return;
  await stack.knex.raw(
    `insert into companies (name) select 'company-' || g || '-' || repeat('x', 1000) from generate_series(1, 30000) g`,
  );
}

/** Starts an export the client then stops reading after its first bytes. */
async function heldExport(): Promise<AbortController> {
  const controller = new AbortController();
  const res = await fetch(`${stack.baseUrl}/Export/Companies`, { signal: controller.signal });
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  const first = await res.body!.getReader().read();
  if (!first.value?.length) throw new Error('no bytes arrived');
  return controller;
}

const pool = () => (stack.knex.client as { pool: { numUsed(): number } }).pool;

// Serial tests run before the concurrent ones, so they alone hold exports while they count them.
test.serial('a client that disconnects mid-stream releases the cursor and its connection', async (t) => {
  await insertManyCompanies();
  for (let round = 0; round < 14; round++) {
    const controller = await heldExport();
    // Backpressure: with the client not reading, the cursor stays open instead of running to the end.
    await eventually('the export query is running', async () => (await runningExports()) === 1);
    controller.abort();
    await eventually('no export query is left running', async () => (await runningExports()) === 0);
    await eventually('the pool is free', async () => pool().numUsed() === 0);
  }
  // More aborted exports than the pool has connections, and the API still answers.
  t.is((await stack.get("/Export/Companies?$filter=Name eq 'none'")).status, 200);
  t.is((await stack.get('/Schemes?$top=1')).status, 200);
});

test.serial('exports beyond half the pool are turned away with 503 while reads go on', async (t) => {
  await insertManyCompanies();
  const held = await Promise.all(Array.from({ length: 6 }, heldExport));
  await eventually('six exports are running', async () => (await runningExports()) === 6);
  const refused = await stack.get('/Export/Companies');
  t.is(refused.status, 503);
  t.is(refused.headers.get('retry-after'), '5');
  t.like(refused.body as object, { type: 'about:blank', title: 'Service Unavailable', status: 503 });
  t.is((await stack.get('/Schemes?$top=1')).status, 200);
  for (const controller of held) controller.abort();
  await eventually('every export has stopped', async () => (await runningExports()) === 0);
  await eventually('the pool is free', async () => pool().numUsed() === 0);
  t.is((await stack.get("/Export/Companies?$filter=Name eq 'none'")).status, 200);
});
