import test from 'ava';
import { checkODataAnswer } from '../support/odata-contract';
import { odataModelOf, type ODataModel } from '../support/odata-model';

/** The OData contract check can fail: each way an answer can break `$metadata` or OData is caught. */

const headers = (level = 'minimal') =>
  new Headers({ 'content-type': `application/json;odata.metadata=${level}`, 'odata-version': '4.0' });
const check = (path: string, body: unknown, status = 200, h = headers(), model?: ODataModel, method = 'GET') =>
  checkODataAnswer(
    { method, path, status, headers: h, text: JSON.stringify(body) },
    (message) => {
      throw new Error(message);
    },
    model,
  );

const ROOT = 'http://localhost:3000/odata';
const context = (fragment: string) => `${ROOT}/$metadata#${fragment}`;
const STAMPS = { CreatedAt: '2026-01-02T03:04:05.678Z', UpdatedAt: '2026-01-02T03:04:05.678Z' };
const scheme = {
  '@odata.etag': '"1"',
  Id: 'h1am3Q',
  SchemeName: 'A',
  TotalUnits: null,
  ...STAMPS,
  Notes: [{ Id: 'x', Text: 't' }],
  Tags: [],
  ExternalLinks: [],
  MarketBoundaries: [],
};
const address = { '@odata.etag': '"2"', Id: 'a', AddressLine: 'l', City: null, Latitude: 1.5, ...STAMPS };
const page = (value: unknown[], extra = {}) => ({ '@odata.context': context('Schemes'), value, ...extra });

test('answers the metadata allows pass', (t) => {
  t.notThrows(() => check('/odata/Schemes', page([scheme], { '@odata.count': 1 })));
  t.notThrows(() => check("/odata/Schemes('h1am3Q')", { '@odata.context': context('Schemes/$entity'), ...scheme }));
  t.notThrows(() =>
    check("/odata/Schemes('h1am3Q')/Address", { '@odata.context': context('Addresses/$entity'), ...address }),
  );
  t.notThrows(() =>
    check('/odata/Schemes/h1am3Q/Developments?$select=Name', {
      '@odata.context': context('Developments(Name)'),
      value: [{ '@odata.etag': '"1"', Id: 'd', Name: 'n' }],
      '@odata.nextLink': `${ROOT}/Schemes('h1am3Q')/Developments?$skip=1`,
    }),
  );
  t.notThrows(() => check('/odata/Schemes?$expand=Address', page([{ ...scheme, Address: address }])));
  t.notThrows(() => check('/odata/Schemes?$expand=Address', page([{ ...scheme, Address: null }])));
  t.notThrows(() =>
    check(
      '/odata/Schemes?$select=SchemeName&$expand=Developments($select=Name;$count=true)',
      page([{ Id: 'h', SchemeName: 'A', Developments: [{ Id: 'd', Name: 'n' }], 'Developments@odata.count': 1 }]),
    ),
  );
  t.notThrows(() => check('/odata/Schemes?$select=Notes/Text', page([{ Id: 'h', Notes: [{ Text: 't' }] }])));
  // A list shows MarketBoundaries items in their reduced form (docs/odata.md): no Geometry.
  t.notThrows(() => check('/odata/Schemes', page([{ ...scheme, MarketBoundaries: [{ Id: 'm' }] }])));
  t.notThrows(() =>
    check("/odata/Schemes('h1am3Q')?$select=TotalUnits", { Id: 'h1am3Q', TotalUnits: 3 }, 200, headers('none')),
  );
  const self = `${ROOT}/Schemes('h1am3Q')`;
  t.notThrows(() =>
    check(
      "/odata/Schemes('h1am3Q')",
      {
        '@odata.context': context('Schemes/$entity'),
        '@odata.id': self,
        '@odata.editLink': self,
        '@odata.type': '#EntityManagement.Scheme',
        ...scheme,
      },
      200,
      headers('full'),
    ),
  );
  t.notThrows(() => check('/odata/Schemes/$count', 4));
  t.notThrows(() => check("/odata/Schemes('h1am3Q')/Developments/$count", 2));
  t.notThrows(() => check('/odata/Nope', { error: { code: 'NotFound', message: 'm', details: [] } }, 404));
});

test('each break is caught', (t) => {
  const bad: [string, unknown, number?, Headers?][] = [
    // the envelope
    ['/odata/Schemes', [scheme]],
    ['/odata/Schemes', page([], { extra: 1 })],
    ['/odata/Schemes', page([], { '@odata.count': -1 })],
    ['/odata/Schemes', page([], { '@odata.nextLink': '/odata/Schemes?$skip=2' })],
    ['/odata/Schemes', { value: [] }],
    ['/odata/Schemes', { '@odata.context': 'c', value: [] }],
    ['/odata/Schemes', { '@odata.context': context('Addresses'), value: [] }],
    ['/odata/Schemes', { '@odata.context': context('Schemes/$entity'), value: [] }],
    ["/odata/Schemes('h1am3Q')", { '@odata.context': context('Schemes'), ...scheme }],
    ['/odata/Schemes', page([]), 200, headers('none')],
    ['/odata/Schemes', page([]), 200, new Headers({ 'content-type': 'application/json' })],
    // types and nullability
    ['/odata/Schemes', page([{ ...scheme, SchemeName: null }])],
    ['/odata/Schemes', page([{ ...scheme, SchemeName: 'x'.repeat(301) }])],
    ['/odata/Schemes', page([{ ...scheme, TotalUnits: 1.5 }])],
    ['/odata/Schemes', page([{ ...scheme, TotalUnits: 2 ** 31 }])],
    ['/odata/Schemes', page([{ ...scheme, TotalFloorArea: '1' }])],
    ['/odata/Schemes', page([{ ...scheme, CompletionDate: '2024-13' }])],
    ['/odata/Schemes', page([{ ...scheme, CreatedAt: '2024-01-01 10:00' }])],
    ['/odata/Schemes', page([{ ...scheme, Notes: [{ Id: 'x', Text: 5 }] }])],
    ['/odata/Schemes', page([{ ...scheme, Notes: null }])],
    ['/odata/Schemes', page([{ ...scheme, Notes: { Id: 'x', Text: 't' } }])],
    // known members only; non-nullable ones present
    ['/odata/Schemes', page([{ ...scheme, Nope: 1 }])],
    ['/odata/Schemes', page([{ ...scheme, SchemeName: undefined }])],
    ['/odata/Schemes', page([{ ...scheme, Notes: undefined }])],
    ['/odata/Schemes', page([{ ...scheme, Notes: [{ Id: 'x' }] }])],
    ["/odata/Schemes('h1am3Q')", { '@odata.context': context('Schemes/$entity'), ...scheme, UpdatedAt: undefined }],
    ['/odata/Schemes?$select=SchemeName', page([scheme])],
    ['/odata/Schemes?$select=Notes/Text', page([{ Id: 'h', Notes: [{ Id: 'x', Text: 't' }] }])],
    ['/odata/Schemes?$select=Notes/Text', page([{ Id: 'h', Notes: [{}] }])],
    // the reduced form is a list's only
    [
      "/odata/Schemes('h1am3Q')",
      { '@odata.context': context('Schemes/$entity'), ...scheme, MarketBoundaries: [{ Id: 'm' }] },
    ],
    // navigation: only when expanded, with its cardinality and target type
    ['/odata/Schemes', page([{ ...scheme, Address: address }])],
    ['/odata/Schemes', page([{ ...scheme, Address: { Id: 'a' } }])],
    ['/odata/Schemes?$expand=Address', page([{ ...scheme, Address: [address] }])],
    ['/odata/Schemes?$expand=Address', page([{ ...scheme, Address: { ...address, Nope: 1 } }])],
    ['/odata/Schemes?$expand=Developments', page([{ ...scheme, Developments: { Id: 'd', Name: 'n' } }])],
    ['/odata/Schemes?$expand=Developments', page([{ ...scheme, Developments: [], 'Developments@odata.count': 0 }])],
    ['/odata/Schemes?$expand=Developments', page([{ ...scheme, Developments: [], 'Address@odata.count': 0 }])],
    // control information
    ['/odata/Schemes', page([{ ...scheme, '@odata.bogus': 'x' }])],
    ['/odata/Schemes', page([{ ...scheme, '@odata.etag': 1 }])],
    ['/odata/Schemes', page([{ ...scheme, '@odata.etag': 'no quotes' }])],
    ['/odata/Schemes', page([{ ...scheme, '@odata.id': `${ROOT}/Schemes('h1am3Q')` }])],
    ['/odata/Schemes', page([{ ...scheme, Notes: [{ '@odata.etag': '"1"', Id: 'x', Text: 't' }] }])],
    ["/odata/Schemes('h1am3Q')", { '@odata.context': context('Schemes/$entity'), ...scheme }, 200, headers('full')],
    [
      "/odata/Schemes('h1am3Q')",
      {
        '@odata.context': context('Schemes/$entity'),
        '@odata.id': 'Schemes(1)',
        '@odata.type': '#EntityManagement.Scheme',
        ...scheme,
      },
      200,
      headers('full'),
    ],
    [
      "/odata/Schemes('h1am3Q')",
      {
        '@odata.context': context('Schemes/$entity'),
        '@odata.id': `${ROOT}/Schemes('h1am3Q')`,
        '@odata.type': '#EntityManagement.Address',
        ...scheme,
      },
      200,
      headers('full'),
    ],
    ['/odata/Schemes', page([{ ...scheme }]), 200, headers('none')],
    // paths, counts, errors
    ["/odata/Schemes('h1am3Q')/Address/$count", 1],
    ["/odata/Schemes('h1am3Q')/Notes", page([])],
    ['/odata/Schemes/$count', { n: 4 }],
    ['/odata/Nope', { type: 'about:blank', title: 'Not Found', status: 404 }, 404],
    ['/odata/Nope', { error: { code: 'NotFound' } }, 404],
  ];
  for (const [path, body, status, h] of bad)
    t.throws(() => check(path, body, status, h), undefined, `${path} ${JSON.stringify(body)}`);
});

test('the check reads the CSDL JSON it is given, not the service', (t) => {
  const model = odataModelOf({
    $Version: '4.0',
    $EntityContainer: 'Shop.Box',
    Shop: {
      Item: {
        $Kind: 'EntityType',
        $Key: ['Id'],
        Id: {},
        Count: { $Type: 'Edm.Int32', $Nullable: true },
        Sold: { $Type: 'Edm.Boolean' },
      },
      Box: { $Kind: 'EntityContainer', Items: { $Collection: true, $Type: 'Shop.Item' } },
    },
  });
  const items = (value: unknown[]) => ({ '@odata.context': 'http://x/odata/$metadata#Items', value });
  t.notThrows(() => check('/odata/Items', items([{ Id: 'a', Count: null, Sold: true }]), 200, headers(), model));
  t.throws(() => check('/odata/Items', items([{ Id: 'a', Count: 1 }]), 200, headers(), model), {
    message: /Item\.Sold is not nullable, but it is missing/,
  });
  t.throws(() => check('/odata/Items', items([{ Id: 'a', Sold: 'yes' }]), 200, headers(), model), {
    message: /"yes" is not an Edm\.Boolean/,
  });
  // Schemes is not a set of this document.
  t.throws(() => check('/odata/Schemes', items([]), 200, headers(), model));
});
