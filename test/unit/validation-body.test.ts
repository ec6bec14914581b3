import test from 'ava';
import fc from 'fast-check';
import { ENTITIES, Scheme, type ScalarField } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { parseWriteBody, toWriteBody } from '../../domain/validation/write-body';
import { isWkt } from '../../domain/validation/wkt';
import { DEFAULT_GEOMETRY_LIMITS } from '../../domain/writes/geometry-limits';
import { ownedCollectionsOf } from '../../domain/writes/ownership';

/** Write-body schemas derived from the entity definitions, and their messages (DESIGN §10). */

function errorsOf(entityName: string, body: unknown, key?: number): string[] {
  const entity = ENTITIES.find((e) => e.name === entityName)!;
  try {
    parseWriteBody(entity, body, DEFAULT_GEOMETRY_LIMITS, key);
    return [];
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err.errors;
  }
}

test('an empty body lists exactly the required fields and relations of each entity, in definition order', (t) => {
  for (const entity of ENTITIES) {
    const required = [
      ...Object.entries(entity.fields).filter(([, f]) => f.required),
      ...Object.entries(entity.relations).filter(([, r]) => r.required),
    ].map(([name]) => `${entity.name}.${name}: is required`);
    t.deepEqual(errorsOf(entity.name, {}), required, entity.name);
  }
  t.deepEqual(errorsOf('Scheme', {}), ['Scheme.SchemeName: is required']);
  t.deepEqual(errorsOf('OccupierEvent', {}), [
    'OccupierEvent.EventDate: is required',
    'OccupierEvent.Scheme: is required',
    'OccupierEvent.Company: is required',
  ]);
});

const WRONG_TYPE: Record<ScalarField['kind'], [unknown, string]> = {
  string: [5, 'must be a string'],
  integer: ['5', 'must be an integer'],
  number: [true, 'must be a number'],
  date: [20240101, 'must be a date (YYYY-MM-DD)'],
  datetime: [1, 'must be a date and time (ISO 8601)'],
  url: [{}, 'must be an absolute http(s) URL'],
  wkt: [[], 'must be WKT geometry text'],
  stringList: ['a', 'must be an array of strings'],
};

test('every writable field rejects a value of the wrong type with the message of its kind', (t) => {
  for (const entity of ENTITIES) {
    for (const [name, field] of Object.entries(entity.fields)) {
      if (field.readOnly) continue;
      const [value, message] = WRONG_TYPE[field.kind];
      t.true(
        errorsOf(entity.name, { [name]: value }).includes(`${entity.name}.${name}: ${message}`),
        `${entity.name}.${name}`,
      );
    }
  }
});

test('ranges, lengths and patterns are worded from the definitions', (t) => {
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', TotalUnits: -1, TotalFloorArea: -0.5 }), [
    'Scheme.TotalUnits: must be between 0 and 2147483647',
    'Scheme.TotalFloorArea: must be at least 0',
  ]);
  t.deepEqual(errorsOf('Address', { AddressLine: 'a', Latitude: 90.5, Longitude: -181 }), [
    'Address.Latitude: must be between -90 and 90',
    'Address.Longitude: must be between -180 and 180',
  ]);
  t.deepEqual(errorsOf('SchemeCompany', { Scheme: { Id: 'x' }, Company: { Id: 'y' }, PercentageShare: 1.01 }), [
    'SchemeCompany.PercentageShare: must be between 0 and 1',
  ]);
  t.deepEqual(errorsOf('Scheme', { SchemeName: '' }), ['Scheme.SchemeName: must not be empty']);
  t.deepEqual(errorsOf('Company', { Name: 'x'.repeat(301) }), ['Company.Name: must be at most 300 characters']);
  t.deepEqual(errorsOf('Country', { Name: 'X', IsoCode: 'GBR' }), ['Country.IsoCode: must be 2 upper-case letters']);
  t.deepEqual(
    errorsOf('OccupierEvent', { EventDate: '2024-01-01', Scheme: { Id: 'a' }, Company: { Id: 'b' }, Currency: 'EU' }),
    ['OccupierEvent.Currency: must be 3 upper-case letters'],
  );
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', TotalUnits: 2 ** 31 }), [
    'Scheme.TotalUnits: must be between 0 and 2147483647',
  ]);
});

test('dates must be real calendar dates a database can hold', (t) => {
  for (const bad of ['2024-02-30', '0000-01-01', '2024-1-1', '2024-01-01T00:00:00Z', '']) {
    t.deepEqual(
      errorsOf('Scheme', { SchemeName: 'x', CompletionDate: bad }),
      ['Scheme.CompletionDate: must be a date (YYYY-MM-DD)'],
      bad,
    );
  }
  for (const good of ['2024-02-29', '0001-01-01', '9999-12-31'])
    t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', CompletionDate: good }), []);
});

test('URLs must be absolute http(s) URLs', (t) => {
  for (const bad of [
    'ftp://example.com',
    'mailto:a@example.com',
    'example.com',
    'http://exa mple.com',
    '//example.com',
  ]) {
    t.deepEqual(
      errorsOf('Company', { Name: 'x', Website: bad }),
      ['Company.Website: must be an absolute http(s) URL'],
      bad,
    );
  }
  for (const good of ['https://example.com/a?b=1#c', 'http://localhost:8080', 'HTTPS://EXAMPLE.COM']) {
    t.deepEqual(errorsOf('Company', { Name: 'x', Website: good }), [], good);
  }
});

test('WKT must parse and end where the geometry ends', (t) => {
  for (const good of [
    'POINT(1 2)',
    'POINT EMPTY',
    'POLYGON((0 0, 1 0, 1 1, 0 0))',
    'MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))',
    ' SRID=4326;POINT(1 2) ',
  ]) {
    t.true(isWkt(good), good);
  }
  for (const bad of [
    '',
    'POINT',
    'POINT(1)',
    'POINT(1 2) trailing',
    'POINT(1 2))',
    'CIRCLE(1 2, 3)',
    'POLYGON((0 0, 1 0)',
  ]) {
    t.false(isWkt(bad), bad);
  }
  t.deepEqual(errorsOf('SchemeMarketBoundary', { Scheme: { Id: 'a' }, Market: { Id: 'b' }, Geometry: 'POINT(1)' }), [
    'SchemeMarketBoundary.Geometry: is not valid WKT',
  ]);
});

test('unknown members are errors at any depth; read-only and expanded members are accepted and dropped', (t) => {
  t.deepEqual(
    errorsOf('Scheme', {
      SchemeName: 'x',
      Colour: 'red',
      Address: { Id: 'abc', Nope: 1 },
      Companies: [{ Company: { Id: 'c' }, Extra: true }],
    }),
    [
      'Scheme.Colour: is not a known field',
      'Scheme.Address.Nope: is not a known field',
      'Scheme.Companies[0].Extra: is not a known field',
    ],
  );
  t.deepEqual(
    errorsOf('Scheme', {
      Id: 'abc',
      CreatedAt: 'whenever',
      UpdatedAt: null,
      SchemeName: 'x',
      Address: { Id: 'abc', AddressLine: 'expanded', Country: { Id: 'gb' } },
      Developments: [{ Name: 'shown by $expand' }],
      Companies: [{ Id: 'link', Scheme: { Id: 'back' }, Company: { Id: 'c' }, CreatedAt: 'x' }],
    }),
    [],
  );
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Address: { AddressLine: 'no id' } }), [
    'Scheme.Address.Id: is required',
  ]);
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Notes: {} }), ['Scheme.Notes: must be an array']);
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Notes: ['text'] }), ['Scheme.Notes[0]: must be an object']);
  t.deepEqual(errorsOf('Scheme', null), ['Scheme: must be a JSON object']);
});

test('the canonical body: every writable member present with its default, read-only members gone', (t) => {
  const body = parseWriteBody(
    Scheme,
    {
      Id: 'ignored',
      SchemeName: 'Canon',
      Address: { Id: 'abc', AddressLine: 'dropped' },
      Companies: [{ Id: 'link', Scheme: { Id: 'back' }, Company: { Id: 'c' }, Role: 'Developer', CreatedAt: 'x' }],
      Notes: [{ Text: 'n' }],
    },
    DEFAULT_GEOMETRY_LIMITS,
  );
  t.deepEqual(body, {
    SchemeName: 'Canon',
    TotalUnits: null,
    TotalFloorArea: null,
    CompletionDate: null,
    Address: { Id: 'abc' },
    BuildingType: null,
    DevelopmentType: null,
    DevelopmentStatus: null,
    Market: null,
    Country: null,
    Companies: [{ Id: 'link', Role: 'Developer', PercentageShare: null, Company: { Id: 'c' } }],
    MarketBoundaries: [],
    Notes: [{ Text: 'n' }],
    Tags: [],
    ExternalLinks: [],
  });
  // Owned collections are exactly those the definitions mark as owned.
  t.deepEqual(
    ownedCollectionsOf(Scheme).map((o) => o.name),
    Object.entries(Scheme.collections)
      .filter(([, c]) => c.owned)
      .map(([name]) => name),
  );
  // The canonical body is itself a valid body, unchanged by a second pass.
  t.deepEqual(toWriteBody(Scheme, body), body);
});

test('an Id contradicting the URL key is an error; the matching Id in any accepted form is not', (t) => {
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Id: 'AAAAAA' }, 1), [
    'Scheme.Id: does not match the key in the URL',
  ]);
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Id: 5 }, 1), ['Scheme.Id: does not match the key in the URL']);
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Id: 'h1am3Q' }, 1), []);
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Id: 'h1am3Q==' }, 1), []);
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Id: '1' }, 1), [], 'bare integers on the routes that take them');
  t.deepEqual(errorsOf('Scheme', { SchemeName: 'x', Id: null }, 1), []);
});

test('property: any 1–200 character name and two upper-case letters make a valid Country; other codes do not', (t) => {
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 200 }), fc.stringMatching(/^[A-Z]{2}$/), (name, iso) => {
      return errorsOf('Country', { Name: name, IsoCode: iso }).length === 0;
    }),
  );
  fc.assert(
    fc.property(
      fc.string().filter((s) => !/^[A-Z]{2}$/.test(s)),
      (iso) =>
        errorsOf('Country', { Name: 'x', IsoCode: iso }).join() === 'Country.IsoCode: must be 2 upper-case letters',
    ),
  );
  t.pass();
});
