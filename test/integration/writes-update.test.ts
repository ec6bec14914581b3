import test from 'ava';
import { encodeId } from '../../domain/ids/id-codec';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { REPRESENTATION, assertProblem, create, patch, read, referenceId } from '../support/writes';

/** PUT and PATCH (spec §4, §4.2, §4.3; DESIGN §6, §10): replacement, JSON Patch, If-Match, problems. */

type Doc = Record<string, unknown>;

let stack: Stack;
let gb: string;
let office: string;
test.before(async () => {
  stack = await startStack({ workers: [(config) => startCommandWorker(config)] });
  gb = await referenceId(stack, 'Country', 'countries', { iso_code: 'GB' });
  office = await referenceId(stack, 'BuildingType', 'building_types', { name: 'Office' });
});
test.after.always(async () => {
  await stack?.close();
});

const put = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  stack.request('PUT', path, { body, headers });

async function fullScheme(name: string): Promise<string> {
  const address = await create(stack, 'Addresses', { AddressLine: `${name} Road` });
  const company = await create(stack, 'Companies', { Name: `${name} Co` });
  return create(stack, 'Schemes', {
    SchemeName: name,
    TotalUnits: 10,
    CompletionDate: '2026-01-01',
    Address: { Id: address },
    BuildingType: { Id: office },
    Companies: [{ Company: { Id: company }, Role: 'Developer', PercentageShare: 0.5 }],
    Notes: [{ Text: 'one' }, { Text: 'two' }],
    Tags: [{ Name: 'a' }, { Name: 'b' }],
    ExternalLinks: [{ Url: 'https://example.com' }],
  });
}

test('PUT replaces the whole entity: omitted fields take their defaults', async (t) => {
  const id = await fullScheme('Replace Me');
  const res = await put(`/Schemes/${id}`, { SchemeName: 'Replaced' });
  t.is(res.status, 204, res.text);
  t.is(res.text, '');
  t.is(res.headers.get('etag'), '"2"');
  const doc = await read(stack, `/Schemes/${id}?$expand=Companies`);
  t.like(doc, {
    SchemeName: 'Replaced',
    TotalUnits: null,
    CompletionDate: null,
    Address: null,
    BuildingType: null,
    Companies: [],
    Notes: [],
    Tags: [],
    ExternalLinks: [],
    MarketBoundaries: [],
  });
});

test('PUT what a GET returned: read-only members ignored, owned items with their Ids kept in place', async (t) => {
  const id = await fullScheme('Round Trip');
  const doc = await read(stack, `/Schemes/${id}?$expand=Companies`);
  const notes = doc.Notes as Doc[];
  const edited = {
    ...doc,
    SchemeName: 'Round Tripped',
    Notes: [{ ...notes[1], Text: 'two, edited' }, notes[0], { Text: 'three' }],
    Tags: [],
  };
  const res = await put(`/Schemes/${id}`, edited, REPRESENTATION);
  t.is(res.status, 200, res.text);
  t.is(res.headers.get('preference-applied'), 'return=representation');
  const after = res.body as Doc;
  t.is(res.headers.get('etag'), '"2"');
  t.is(after.SchemeName, 'Round Tripped');
  t.is(after.CreatedAt, doc.CreatedAt);
  const afterNotes = after.Notes as Doc[];
  // Written order; existing notes keep their Ids; the new one gets its own.
  t.deepEqual(
    afterNotes.map((n) => n.Text),
    ['two, edited', 'one', 'three'],
  );
  t.is(afterNotes[0]!.Id, notes[1]!.Id);
  t.is(afterNotes[1]!.Id, notes[0]!.Id);
  t.false([notes[0]!.Id, notes[1]!.Id].includes(afterNotes[2]!.Id));
  t.deepEqual(after.Tags, []);
  // A PUT that changes nothing leaves the version alone. (A complete Scheme includes its Companies,
  // which a keyed GET shows only when expanded.)
  const same = await put(`/Schemes/${id}`, await read(stack, `/Schemes/${id}?$expand=Companies`));
  t.is(same.status, 204);
  t.is(same.headers.get('etag'), '"2"');
});

test('PUT: an Id contradicting the URL key is a validation error; unknown keys are 404', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Keyed' });
  const other = await create(stack, 'Companies', { Name: 'Other' });
  assertProblem(t, await put(`/Companies/${id}`, { Id: other, Name: 'X' }), 400, 'Validation Failed', {
    errors: ['Company.Id: does not match the key in the URL'],
  });
  t.is((await put(`/Companies/${id}`, { Id: id, Name: 'Same Id' })).status, 204);
  const missing = encodeId('Company', 999_999);
  assertProblem(t, await put(`/Companies/${missing}`, { Name: 'Ghost' }), 404, 'Not Found', {
    detail: `Company '${missing}' does not exist.`,
  });
  t.is((await put('/Companies/!!!!!!', { Name: 'Ghost' })).status, 404);
  // Bare integer keys work on the five routes that accept them.
  const scheme = await create(stack, 'Schemes', { SchemeName: 'By Integer' });
  const row = (await stack.knex('schemes').where({ encoded_id: scheme }).first('id')) as { id: number };
  t.is((await put(`/Schemes/${row.id}`, { Id: scheme, SchemeName: 'By Integer 2' })).status, 204);
  t.is((await read(stack, `/Schemes/${scheme}`)).SchemeName, 'By Integer 2');
});

test('PATCH: ops apply in order; 204 by default, 200 with the entity when asked', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Patchy', RegistrationNumber: 'P1' });
  const res = await patch(stack, `/Companies/${id}`, [
    { op: 'replace', path: '/Name', value: 'Patched' },
    { op: 'test', path: '/Name', value: 'Patched' },
    { op: 'remove', path: '/RegistrationNumber' },
    { op: 'add', path: '/Website', value: 'https://patched.example' },
  ]);
  t.is(res.status, 204, res.text);
  t.is(res.headers.get('etag'), '"2"');
  // A removed optional member takes its default, as with PUT.
  t.like(await read(stack, `/Companies/${id}`), {
    Name: 'Patched',
    RegistrationNumber: null,
    Website: 'https://patched.example',
  });
  for (const prefer of ['return=representation', 'RETURN=REPRESENTATION']) {
    const rep = await patch(stack, `/Companies/${id}`, [{ op: 'replace', path: '/Name', value: prefer }], { prefer });
    t.is(rep.status, 200);
    t.is(rep.headers.get('preference-applied'), 'return=representation');
    t.deepEqual(rep.body, await read(stack, `/Companies/${id}`));
  }
  for (const prefer of ['return=minimal', 'return=representation, respond-async']) {
    const min = await patch(stack, `/Companies/${id}`, [{ op: 'replace', path: '/Name', value: prefer }], { prefer });
    t.is(min.status, 204, prefer);
    t.is(min.headers.get('preference-applied'), null);
  }
});

test('PATCH /<Relation>/Id sets the relation by encoded Id, also while it is null', async (t) => {
  const first = await create(stack, 'Addresses', { AddressLine: 'First' });
  const second = await create(stack, 'Addresses', { AddressLine: 'Second' });
  const id = await create(stack, 'Schemes', { SchemeName: 'Relational' });
  t.is((await read(stack, `/Schemes/${id}`)).Address, null);
  t.is((await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/Address/Id', value: first }])).status, 204);
  t.deepEqual((await read(stack, `/Schemes/${id}`)).Address, { Id: first });
  t.is((await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/Address/Id', value: second }])).status, 204);
  t.deepEqual((await read(stack, `/Schemes/${id}`)).Address, { Id: second });
  t.is((await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/Address', value: null }])).status, 204);
  t.is((await read(stack, `/Schemes/${id}`)).Address, null);
  t.is((await patch(stack, `/Schemes/${id}`, [{ op: 'add', path: '/BuildingType/Id', value: office }])).status, 204);
  t.deepEqual((await read(stack, `/Schemes/${id}`)).BuildingType, { Id: office });
  const missing = encodeId('Address', 999_999);
  assertProblem(
    t,
    await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/Address/Id', value: missing }]),
    400,
    'Validation Failed',
    { errors: [`Scheme.Address.Id: Address '${missing}' does not exist`] },
  );
  // Changing a related entity's own fields through the relation is not a thing: read-only.
  assertProblem(
    t,
    await patch(stack, `/Schemes/${id}`, [{ op: 'add', path: '/BuildingType/Name', value: 'Renamed' }]),
    400,
    'Validation Failed',
    { errors: ['Scheme.BuildingType.Name: is read-only'] },
  );
});

test('PATCH owned collections: add, replace inside an item, remove, copy', async (t) => {
  const id = await fullScheme('Collections');
  const ops = [
    { op: 'add', path: '/Notes/-', value: { Text: 'three' } },
    { op: 'replace', path: '/Companies/0/PercentageShare', value: 0.9 },
    { op: 'remove', path: '/Tags/0' },
    { op: 'copy', from: '/Notes/0', path: '/Notes/-' },
    { op: 'move', from: '/ExternalLinks/0', path: '/ExternalLinks/0' },
  ];
  const before = await read(stack, `/Schemes/${id}`);
  const res = await patch(stack, `/Schemes/${id}`, ops, REPRESENTATION);
  t.is(res.status, 200, res.text);
  const doc = res.body as Doc;
  const notes = doc.Notes as Doc[];
  t.deepEqual(
    notes.map((n) => n.Text),
    ['one', 'two', 'three', 'one'],
  );
  t.is(notes[0]!.Id, (before.Notes as Doc[])[0]!.Id);
  t.not(notes[3]!.Id, notes[0]!.Id, 'a copied note is a new note');
  t.deepEqual(
    (doc.Tags as Doc[]).map((n) => n.Name),
    ['b'],
  );
  t.is((doc.Tags as Doc[])[0]!.Id, (before.Tags as Doc[])[1]!.Id);
  const expanded = await read(stack, `/Schemes/${id}?$expand=Companies`);
  t.is((expanded.Companies as Doc[])[0]!.PercentageShare, 0.9);
});

test('PATCH validates the result as a whole, like PUT', async (t) => {
  const id = await fullScheme('Whole');
  assertProblem(
    t,
    await patch(stack, `/Schemes/${id}`, [
      { op: 'replace', path: '/Companies/0/PercentageShare', value: 2 },
      { op: 'replace', path: '/SchemeName', value: null },
      { op: 'add', path: '/Colour', value: 'red' },
    ]),
    400,
    'Validation Failed',
    {
      errors: [
        'Scheme.Colour: is not a known field',
        'Scheme.SchemeName: is required',
        'Scheme.Companies[0].PercentageShare: must be between 0 and 1',
      ],
    },
  );
  t.is((await read(stack, `/Schemes/${id}`)).SchemeName, 'Whole');
});

test('PATCH: a failed test or a path missing from the document is a 409, and nothing applies', async (t) => {
  const id = await fullScheme('Conflicted');
  assertProblem(
    t,
    await patch(stack, `/Schemes/${id}`, [
      { op: 'replace', path: '/SchemeName', value: 'Changed' },
      { op: 'test', path: '/TotalUnits', value: 11 },
    ]),
    409,
    'Conflict',
    {
      detail: 'Scheme.TotalUnits: test failed (operation 1)',
      errors: ['Scheme.TotalUnits: test failed (operation 1)'],
    },
  );
  t.is((await read(stack, `/Schemes/${id}`)).SchemeName, 'Conflicted');
  assertProblem(t, await patch(stack, `/Schemes/${id}`, [{ op: 'remove', path: '/Notes/5' }]), 409, 'Conflict', {
    detail: 'Scheme.Notes[5]: does not exist (operation 0, remove)',
    errors: ['Scheme.Notes[5]: does not exist (operation 0, remove)'],
  });
  assertProblem(
    t,
    await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/Notes/01/Text', value: 'x' }]),
    409,
    'Conflict',
    {
      detail: 'Scheme.Notes.01.Text: does not exist (operation 0, replace)',
      errors: ['Scheme.Notes.01.Text: does not exist (operation 0, replace)'],
    },
  );
});

test('PATCH: malformed operations and read-only paths are 400 Validation Failed, listed together', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Malformed' });
  assertProblem(
    t,
    await patch(stack, `/Companies/${id}`, [
      { op: 'jump', path: '/Name' },
      { op: 'replace', path: '/Name' },
      { op: 'add', path: 'Name', value: 'x' },
      { op: 'move', path: '/Name' },
      'not an op',
      { op: 'replace', path: '/Id', value: 'AAAAAA' },
      { op: 'remove', path: '/UpdatedAt' },
      { op: 'test', path: '/Id', value: id },
    ]),
    400,
    'Validation Failed',
    {
      errors: [
        'Company.Name: operation 0 has unknown op "jump"',
        'Company.Name: operation 1 (replace) needs a value',
        'Company: operation 2 (add) has an invalid path',
        "Company.Name: operation 3 (move) needs a valid 'from' pointer",
        'Company: operation 4 must be an object',
        'Company.Id: is read-only',
        'Company.UpdatedAt: is read-only',
      ],
    },
  );
});

test('PATCH: a body that is not an array is 400 Bad Request; other media types are 415', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Arrays Only' });
  for (const body of [{ op: 'replace', path: '/Name', value: 'x' }, 'text', 42, null]) {
    assertProblem(t, await patch(stack, `/Companies/${id}`, body), 400, 'Bad Request', {
      detail: 'JSON Patch must be an array.',
    });
  }
  const res = await stack.request('PATCH', `/Companies/${id}`, {
    body: [{ op: 'replace', path: '/Name', value: 'x' }],
  });
  assertProblem(t, res, 415, 'Unsupported Media Type', { detail: 'PATCH requests take application/json-patch+json.' });
  assertProblem(t, await patch(stack, `/Companies/${encodeId('Company', 999_999)}`, []), 404, 'Not Found', {
    detail: `Company '${encodeId('Company', 999_999)}' does not exist.`,
  });
});

test('If-Match: a stale ETag is 412 on PATCH, PUT and DELETE; the current one or * is accepted', async (t) => {
  const id = await create(stack, 'Countries', { Name: 'Versioned', IsoCode: 'VV' });
  const etag = (await stack.get(`/Countries/${id}`)).headers.get('etag')!;
  t.is(etag, '"1"');
  const ok = await patch(stack, `/Countries/${id}`, [{ op: 'replace', path: '/Name', value: 'V2' }], {
    'if-match': etag,
  });
  t.is(ok.status, 204);
  t.is(ok.headers.get('etag'), '"2"');
  const detail = `Country '${id}' has changed: If-Match "1" does not match its ETag "2".`;
  assertProblem(t, await patch(stack, `/Countries/${id}`, [], { 'if-match': etag }), 412, 'Precondition Failed', {
    detail,
  });
  assertProblem(
    t,
    await put(`/Countries/${id}`, { Name: 'V3', IsoCode: 'VV' }, { 'if-match': etag }),
    412,
    'Precondition Failed',
    {
      detail,
    },
  );
  assertProblem(
    t,
    await stack.request('DELETE', `/Countries/${id}`, { headers: { 'if-match': etag } }),
    412,
    'Precondition Failed',
    {
      detail,
    },
  );
  t.is((await put(`/Countries/${id}`, { Name: 'V3', IsoCode: 'VV' }, { 'if-match': '"2"' })).status, 204);
  t.is((await put(`/Countries/${id}`, { Name: 'V4', IsoCode: 'VV' }, { 'if-match': '*' })).status, 204);
  t.is((await read(stack, `/Countries/${id}`)).Name, 'V4');
});

test('unique values and other families on update: Country, InvestmentEvent Companies', async (t) => {
  const id = await create(stack, 'Countries', { Name: 'Unique', IsoCode: 'UQ' });
  assertProblem(
    t,
    await patch(stack, `/Countries/${id}`, [{ op: 'replace', path: '/IsoCode', value: 'GB' }]),
    409,
    'Conflict',
    {
      detail: "Country.IsoCode: 'GB' is already used",
      errors: ["Country.IsoCode: 'GB' is already used"],
    },
  );
  const buyer = await create(stack, 'Companies', { Name: 'IE Buyer', Country: { Id: gb } });
  const seller = await create(stack, 'Companies', { Name: 'IE Seller' });
  const event = await create(stack, 'InvestmentEvents', {
    EventDate: '2024-05-01',
    Companies: [{ Company: { Id: buyer }, Role: 'Buyer' }],
  });
  const before = await read(stack, `/InvestmentEvents/${event}?$expand=Companies`);
  const buyerLink = (before.Companies as Doc[])[0]!;
  const res = await put(`/InvestmentEvents/${event}`, {
    EventDate: '2024-05-02',
    Companies: [
      { Company: { Id: seller }, Role: 'Seller' },
      { ...buyerLink, PercentageShare: 0.5 },
    ],
  });
  t.is(res.status, 204, res.text);
  const after = await read(stack, `/InvestmentEvents/${event}?$expand=Companies`);
  t.is(after.EventDate, '2024-05-02');
  const links = after.Companies as Doc[];
  t.deepEqual(
    links.map((c) => [(c.Company as Doc).Id, c.Role, c.PercentageShare]),
    [
      [seller, 'Seller', null],
      [buyer, 'Buyer', 0.5],
    ],
  );
  t.is(links[1]!.Id, buyerLink.Id, 'the listed link was updated in place');
});

test('an owned row written through its own route moves its parent’s ETag', async (t) => {
  const id = await fullScheme('Parent');
  const expanded = await read(stack, `/Schemes/${id}?$expand=Companies`);
  const link = (expanded.Companies as Doc[])[0]!.Id as string;
  const etag = (await stack.get(`/Schemes/${id}`)).headers.get('etag');
  const res = await patch(stack, `/SchemeCompanies/${link}`, [{ op: 'replace', path: '/Role', value: 'Lender' }]);
  t.is(res.status, 204, res.text);
  t.not((await stack.get(`/Schemes/${id}`)).headers.get('etag'), etag);
  const after = await read(stack, `/Schemes/${id}?$expand=Companies`);
  t.is((after.Companies as Doc[])[0]!.Role, 'Lender');
});
