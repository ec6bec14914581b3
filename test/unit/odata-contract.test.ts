import test from 'ava';
import { checkODataAnswer } from '../support/odata-contract';

/** The OData contract check can fail: each way an answer can break `$metadata` or OData is caught. */

const headers = (type = 'application/json;odata.metadata=minimal') =>
  new Headers({ 'content-type': type, 'odata-version': '4.0' });
const check = (path: string, body: unknown, status = 200, h = headers()) =>
  checkODataAnswer({ method: 'GET', path, status, headers: h, text: JSON.stringify(body) }, (message) => {
    throw new Error(message);
  });

const scheme = {
  '@odata.etag': '"1"',
  Id: 'h1am3Q',
  SchemeName: 'A',
  TotalUnits: null,
  Notes: [{ Id: 'x', Text: 't' }],
};

test('answers the metadata allows pass', (t) => {
  t.notThrows(() => check('/odata/Schemes', { '@odata.context': 'c', '@odata.count': 1, value: [scheme] }));
  t.notThrows(() => check("/odata/Schemes('h1am3Q')", scheme));
  t.notThrows(() => check("/odata/Schemes('h1am3Q')/Address", { Id: 'a', AddressLine: 'l', Latitude: 1.5 }));
  t.notThrows(() => check('/odata/Schemes/h1am3Q/Developments', { value: [{ Id: 'd', Name: 'n', Units: 3 }] }));
  t.notThrows(() =>
    check('/odata/Schemes?$expand=Address', { value: [{ ...scheme, Address: { Id: 'a', City: null } }] }),
  );
  t.notThrows(() => check('/odata/Nope', { error: { code: 'NotFound', message: 'm', details: [] } }, 404));
});

test('each break is caught', (t) => {
  const bad: [string, unknown, number?, Headers?][] = [
    ['/odata/Schemes', [scheme]],
    ['/odata/Schemes', { value: [{ ...scheme, SchemeName: null }] }],
    ['/odata/Schemes', { value: [{ ...scheme, TotalUnits: 1.5 }] }],
    ['/odata/Schemes', { value: [{ ...scheme, Nope: 1 }] }],
    ['/odata/Schemes', { value: [{ ...scheme, CompletionDate: '2024-13' }] }],
    ['/odata/Schemes', { value: [{ ...scheme, Notes: [{ Id: 'x', Text: 5 }] }] }],
    ['/odata/Schemes', { value: [{ ...scheme, Address: { Id: 'a', Nope: 1 } }] }],
    ['/odata/Schemes', { value: [], extra: 1 }],
    ['/odata/Schemes', { value: [{ ...scheme, '@odata.bogus': 'x' }] }],
    ['/odata/Nope', { type: 'about:blank', title: 'Not Found', status: 404 }, 404],
    ['/odata/Schemes', { value: [] }, 200, new Headers({ 'content-type': 'application/json' })],
  ];
  for (const [path, body, status, h] of bad)
    t.throws(() => check(path, body, status, h), undefined, JSON.stringify(body));
});
