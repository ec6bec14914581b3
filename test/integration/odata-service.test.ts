import test from 'ava';
import { SignJWT } from 'jose';
import { csdlJson } from '../../api/odata/metadata/csdl-json';
import { csdlXml } from '../../api/odata/metadata/csdl-xml';
import { startStack, type Stack } from '../support/stack';

/**
 * The OData service root over HTTP (DESIGN §17): the service document and `$metadata` without a
 * token and their format negotiation, `OData-Version` on every answer, `OData-MaxVersion` below 4.0
 * refused, and errors in the OData JSON error format with the root's statuses. The contract check
 * (test/support/odata-contract.ts) checks every answer here too.
 */

const ENV = {
  AUTH_MOCK: 'false',
  AUTH_SECRET: 'an-odata-secret-of-more-than-32-bytes!',
  AUTH_ISSUER: 'http://localhost/',
  AUTH_AUDIENCE: 'emapi-local',
};
const token = (roles: string[]) =>
  new SignJWT({ iss: ENV.AUTH_ISSUER, aud: ENV.AUTH_AUDIENCE, sub: 'sam', roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(ENV.AUTH_SECRET));

let stack: Stack;
const settings = { maxTop: 1000, maxExpandDepth: 3 };
test.before(async () => {
  // Real authentication: the open routes must answer without a token.
  stack = await startStack({ workers: [], env: ENV });
});
test.after.always(async () => {
  await stack?.close();
});

type ODataError = { error: { code: string; message: string; target?: string; details: unknown[] } };

test('the service document lists every set with the context URL of $metadata, without a token', async (t) => {
  for (const path of ['/odata', '/odata/']) {
    const res = await stack.get(path);
    t.is(res.status, 200, path);
    t.is(res.headers.get('odata-version'), '4.0');
    t.regex(res.headers.get('content-type')!, /^application\/json;\s*odata\.metadata=minimal/);
    const doc = res.body as { '@odata.context': string; value: { name: string; kind: string; url: string }[] };
    t.is(doc['@odata.context'], `${stack.baseUrl}/odata/$metadata`);
    t.deepEqual(doc.value[0], { name: 'Schemes', kind: 'EntitySet', url: 'Schemes' });
  }
});

test('$metadata is CSDL XML by default and CSDL JSON on request, without a token', async (t) => {
  const xml = await stack.get('/odata/$metadata');
  t.is(xml.status, 200);
  t.regex(xml.headers.get('content-type')!, /^application\/xml/);
  t.is(xml.text, csdlXml(settings));
  t.is(xml.headers.get('odata-version'), '4.0');
  for (const [path, headers] of [
    ['/odata/$metadata', { accept: 'application/json' }],
    ['/odata/$metadata?$format=json', {}],
    ['/odata/$metadata?$format=application/json', { accept: 'application/xml' }],
  ] as const) {
    const json = await stack.get(path, headers);
    t.is(json.status, 200, path);
    t.regex(json.headers.get('content-type')!, /^application\/json/);
    t.deepEqual(json.body, csdlJson(settings));
  }
  const both = await stack.get('/odata/$metadata', { accept: 'application/xml, application/json;q=0.5' });
  t.regex(both.headers.get('content-type')!, /^application\/xml/);
  const star = await stack.get('/odata/$metadata', { accept: '*/*' });
  t.regex(star.headers.get('content-type')!, /^application\/xml/);
  // A tie is the default: axios (odata2ts's download) lists JSON first beside */*, and needs XML.
  for (const accept of ['application/json, text/plain, */*', 'application/json, application/*', 'application/*']) {
    const tie = await stack.get('/odata/$metadata', { accept });
    t.regex(tie.headers.get('content-type')!, /^application\/xml/, accept);
  }
  const ranked = await stack.get('/odata/$metadata', { accept: 'application/json, */*;q=0.8' });
  t.regex(ranked.headers.get('content-type')!, /^application\/json/);
  const xmlLow = await stack.get('/odata/$metadata', {
    accept: 'application/xml;q=0.1, application/json;odata.metadata=minimal',
  });
  t.regex(xmlLow.headers.get('content-type')!, /^application\/json/);
  const bad = await stack.get('/odata/$metadata?$format=atom');
  t.is(bad.status, 400);
  t.is((bad.body as ODataError).error.code, 'BadRequest');
});

test('OData-MaxVersion below 4.0 is a 406 in the OData error form; 4.0 and 4.01 are served', async (t) => {
  for (const version of ['3.0', '2.0', 'x']) {
    const res = await stack.get('/odata/$metadata', { 'odata-maxversion': version });
    t.is(res.status, 406, version);
    t.is(res.headers.get('odata-version'), '4.0');
    const { error } = res.body as ODataError;
    t.is(error.code, 'NotAcceptable');
    t.regex(error.message, /OData 4\.0/);
  }
  for (const version of ['4.0', '4.01']) {
    t.is((await stack.get('/odata/', { 'odata-maxversion': version })).status, 200, version);
  }
});

test('errors under /odata are OData errors with the statuses of the root', async (t) => {
  // Everything but the service document and $metadata needs a token, as at the root.
  const unauthorized = await stack.get('/odata/Schemes');
  t.is(unauthorized.status, 401);
  t.truthy(unauthorized.headers.get('www-authenticate'));
  t.is(unauthorized.headers.get('odata-version'), '4.0');
  t.regex(unauthorized.headers.get('content-type')!, /^application\/json/);
  t.like((unauthorized.body as ODataError).error, { code: 'Unauthorized', details: [] });
  const root = await stack.get('/Schemes');
  t.is(root.status, 401);
  t.regex(root.headers.get('content-type')!, /^application\/problem\+json/);
  t.is(root.headers.get('odata-version'), null);
  // A caller without a role: the root's 403; with one, the read; an unknown path: the root's 404.
  const forbidden = await stack.get('/odata/Schemes', { authorization: `Bearer ${await token([])}` });
  t.is(forbidden.status, 403);
  t.is((forbidden.body as ODataError).error.code, 'Forbidden');
  const user = { authorization: `Bearer ${await token(['User'])}` };
  t.is((await stack.get('/odata/Schemes', user)).status, 200);
  t.is((await stack.get('/odata/NoSuchSet', user)).status, 404);
  t.is((await stack.get('/odata/NoSuchSet')).status, 401);
  // A 400 with its message, the option named.
  const bad = await stack.get('/odata/Schemes?$filter=Nope eq 1', user);
  t.is(bad.status, 400);
  t.like((bad.body as ODataError).error, {
    code: 'BadRequest',
    message: "$filter: unknown property 'Nope' of Scheme at position 0",
  });
});

test('a root route answers as before: no OData-Version, problem bodies', async (t) => {
  const res = await stack.get('/openapi.json');
  t.is(res.status, 200);
  t.is(res.headers.get('odata-version'), null);
  const doc = res.body as { info: { description: string; 'x-odata': unknown } };
  t.deepEqual(doc.info['x-odata'], { serviceRoot: '/odata', metadata: '/odata/$metadata' });
  t.regex(doc.info.description, /\/odata\/\$metadata/);
});
