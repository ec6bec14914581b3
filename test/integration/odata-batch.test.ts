import test from 'ava';
import fc from 'fast-check';
import { OData } from '@odata/client';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { parseMultipartBatch, type BatchPart, type HttpMessage } from '../../api/batch/multipart-batch';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { enc, insertReadFixture, type ReadFixture } from '../support/fixtures';

/**
 * `POST /odata/$batch` (DESIGN §17) by hand-built requests in both formats — the JSON batch format
 * of §12 and OData 4.0's multipart/mixed — and by `@odata/client`'s batch support: each request is
 * answered as it is alone under `/odata` (value envelope, context URLs, OData errors), through the
 * one route table and the batch runner of the root's `$batch`, within its limits. Every answer
 * passes the contract check (test/support/odata-contract.ts: each error inside is an OData error).
 */

const MAX_REQUESTS = 12;
const MAX_BYTES = 64 * 1024;
const MAX_READ_ROWS = 500;

// The tests that count rows run serially, in this order, before the rest (ava runs serial tests first).
let stack: Stack;
let fx: ReadFixture;
test.before(async () => {
  stack = await startStack({
    workers: [(config) => startCommandWorker(config)],
    env: {
      BATCH_MAX_REQUESTS: String(MAX_REQUESTS),
      BATCH_MAX_BYTES: String(MAX_BYTES),
      BATCH_MAX_READ_ROWS: String(MAX_READ_ROWS),
    },
  });
  fx = await insertReadFixture(stack.knex);
});
test.after.always(async () => {
  await stack?.close();
});

type Doc = Record<string, unknown>;
interface JsonResponse {
  id: string;
  status: number;
  headers: Record<string, string>;
  body?: Doc & { value?: Doc[]; error?: Doc };
}

const scheme = (i: number) => enc('Scheme', fx.schemes[i]!);
const address = (i: number) => enc('Address', fx.addresses[i]!);

async function jsonBatch(requests: unknown[], headers: Record<string, string> = {}) {
  const res = await stack.request('POST', '/odata/$batch', { body: { requests }, headers });
  return res;
}

function responsesOf(res: HttpResult): Record<string, JsonResponse> {
  const { responses } = res.body as { responses: JsonResponse[] };
  return Object.fromEntries(responses.map((r) => [r.id, r]));
}

const CRLF = '\r\n';

/** One `application/http` part of a hand-built multipart batch. */
function part(boundary: string, request: string, body = '', contentId?: string): string {
  const id = contentId === undefined ? '' : `Content-ID: ${contentId}${CRLF}`;
  return `--${boundary}${CRLF}Content-Type: application/http${CRLF}Content-Transfer-Encoding: binary${CRLF}${id}${CRLF}${request}${CRLF}${body ? `Content-Type: application/json${CRLF}` : ''}${CRLF}${body}${CRLF}`;
}

function changeset(boundary: string, inner: string, parts: string[]): string {
  return `--${boundary}${CRLF}Content-Type: multipart/mixed; boundary=${inner}${CRLF}${CRLF}${parts.join('')}--${inner}--${CRLF}`;
}

async function multipartBatch(parts: string[], boundary = 'batch_x') {
  const raw = `${parts.join('')}--${boundary}--${CRLF}`;
  return stack.request('POST', '/odata/$batch', {
    raw,
    headers: { 'content-type': `multipart/mixed; boundary=${boundary}` },
  });
}

/** The parts of a multipart answer, each message's JSON body parsed. */
async function answerParts(res: HttpResult): Promise<BatchPart[]> {
  return parseMultipartBatch(
    Buffer.from(res.text, 'utf8'),
    res.headers.get('content-type')!,
    { maxMessages: 1000, maxHeaderBytes: 16 * 1024 },
    'response',
  );
}

const statusOf = (m: HttpMessage) => (m.start as { status: number }).status;
const jsonOf = (m: HttpMessage) => JSON.parse(m.body.toString('utf8')) as Doc & { value?: Doc[]; error?: Doc };
const headerOf = (m: HttpMessage, name: string) =>
  m.headers.find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

test.serial('JSON format: reads answer in the OData envelope, URLs relative, root-relative or absolute', async (t) => {
  const res = await jsonBatch([
    { id: 'list', method: 'GET', url: 'Schemes?$top=2&$count=true&$select=SchemeName' },
    { id: 'one', method: 'GET', url: `Schemes('${scheme(0)}')` },
    { id: 'count', method: 'GET', url: '/odata/Schemes/$count' },
    { id: 'nav', method: 'GET', url: `${stack.baseUrl}/odata/Schemes('${scheme(0)}')/Address` },
    { id: 'none', method: 'GET', url: `Schemes/${scheme(2)}/Address` },
    { id: 'paged', method: 'GET', url: 'Addresses', headers: { Prefer: 'odata.maxpagesize=2' } },
    { id: 'full', method: 'GET', url: `Schemes('${scheme(1)}')?$format=application/json;odata.metadata=full` },
    { id: 'notes', method: 'GET', url: `Schemes('${scheme(0)}')/Notes` },
    { id: 'noteCount', method: 'GET', url: `Schemes('${scheme(0)}')/Notes/$count` },
    { id: 'navCount', method: 'GET', url: `Schemes('${scheme(0)}')/Developments/$count` },
    { id: 'dollarKey', method: 'GET', url: `Schemes('$count')` },
    {
      id: 'member',
      method: 'GET',
      url: `Schemes('${scheme(0)}')/Developments('${enc('Development', fx.developments[0]!)}')`,
    },
  ]);
  t.is(res.status, 200);
  t.is(res.headers.get('odata-version'), '4.0');
  const r = responsesOf(res);
  t.is(r.list!.status, 200);
  t.is(r.list!.body!['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes(SchemeName)`);
  t.is(r.list!.body!['@odata.count'], 4);
  t.deepEqual(
    r.list!.body!.value!.map((s) => Object.keys(s).sort()),
    [
      ['@odata.etag', 'Id', 'SchemeName'],
      ['@odata.etag', 'Id', 'SchemeName'],
    ],
  );
  t.false('@odata.nextLink' in r.list!.body!, '$top is the whole result');
  t.is(r.one!.body!['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes/$entity`);
  t.is(r.one!.body!.SchemeName, 'Alpha Tower');
  t.regex(r.one!.headers.etag!, /^"\d+"$/);
  t.is(r.count!.body as unknown, '4');
  t.is(r.nav!.body!['@odata.context'], `${stack.baseUrl}/odata/$metadata#Addresses/$entity`);
  t.is(r.nav!.body!.Id, address(0));
  t.is(r.none!.status, 204);
  t.is(r.paged!.body!.value!.length, 2);
  t.is(r.paged!.headers['preference-applied'], 'odata.maxpagesize=2');
  t.regex(r.paged!.body!['@odata.nextLink'] as string, /^http:\/\/.*\/odata\/Addresses\?/);
  t.is(r.full!.body!['@odata.id'], `${stack.baseUrl}/odata/Schemes('${scheme(1)}')`);
  // What each request answers alone (the same body, the same status).
  const alone = await stack.get(`/odata/Schemes('${scheme(0)}')`);
  t.deepEqual(r.one!.body, alone.body);
  for (const [id, path] of [
    ['notes', `Schemes('${scheme(0)}')/Notes`],
    ['member', `Schemes('${scheme(0)}')/Developments('${enc('Development', fx.developments[0]!)}')`],
  ] as const) {
    const single = await stack.get(`/odata/${path}`);
    t.is(r[id]!.status, 200, id);
    t.deepEqual(r[id]!.body, single.body, id);
  }
  // A count of a navigation collection or of a complex collection property, as alone (text/plain).
  for (const [id, path] of [
    ['noteCount', `Schemes('${scheme(0)}')/Notes/$count`],
    ['navCount', `Schemes('${scheme(0)}')/Developments/$count`],
  ] as const) {
    const single = await stack.get(`/odata/${path}`);
    t.is(single.status, 200, id);
    t.is(r[id]!.status, 200, id);
    t.is(r[id]!.headers['content-type'], 'text/plain', id);
    t.is(r[id]!.body as unknown, single.text, id);
  }
  t.is(r.navCount!.body as unknown, '2', 'the fixture scheme has two developments');
  // A key written `$count` is a key, here as alone: no such entity.
  t.is(r.dollarKey!.status, 404);
  t.is(r.notes!.body!['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes('${scheme(0)}')/Notes`);
});

test('JSON format: errors are OData errors; dependsOn on a failed request is a 424; root paths are not reached', async (t) => {
  const res = await jsonBatch([
    { id: 'bad', method: 'GET', url: 'Schemes?$filter=Nope eq 1' },
    { id: 'after', method: 'GET', url: 'Schemes', dependsOn: ['bad'] },
    { id: 'unknown', method: 'GET', url: 'Nowhere' },
    { id: 'missing', method: 'GET', url: "Schemes('zzzzzz')" },
    { id: 'root', method: 'GET', url: '/Schemes' },
    { id: 'rootAgain', method: 'GET', url: 'http://elsewhere/Schemes' },
    { id: 'method', method: 'MERGE', url: 'Schemes' },
  ]);
  t.is(res.status, 200);
  const r = responsesOf(res);
  t.is(r.bad!.status, 400);
  t.is(r.bad!.body!.error!.code, 'BadRequest');
  t.regex(r.bad!.body!.error!.message as string, /unknown property 'Nope'/);
  t.is(r.after!.status, 424);
  t.is(r.after!.body!.error!.code, 'FailedDependency');
  for (const id of ['unknown', 'missing', 'root', 'rootAgain']) {
    t.is(r[id]!.status, 404, id);
    t.is(r[id]!.body!.error!.code, 'NotFound', id);
  }
  t.is(r.method!.status, 405);
  // A root batch does not reach `/odata`'s routes either.
  const root = await stack.request('POST', '/$batch', {
    body: { requests: [{ id: 'o', method: 'GET', url: 'odata/Schemes' }] },
  });
  t.is((root.body as { responses: JsonResponse[] }).responses[0]!.status, 404);
});

test.serial(
  'multipart: reads, each an application/http part with status line, headers and body; Content-ID echoed',
  async (t) => {
    const b = 'batch_reads';
    const res = await multipartBatch(
      [
        part(b, 'GET Schemes?$top=1 HTTP/1.1', '', 'r1'),
        part(b, `GET Schemes('${scheme(1)}') HTTP/1.1`),
        part(b, 'GET Schemes/$count HTTP/1.1'),
        part(b, "GET Schemes('zzzzzz') HTTP/1.1"),
      ],
      b,
    );
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type')!, /^multipart\/mixed; boundary=batchresponse_[0-9a-f-]+$/);
    const parts = await answerParts(res);
    const messages = parts.map((p) => (p as { message: HttpMessage }).message);
    t.is(messages.length, 4);
    t.is(statusOf(messages[0]!), 200);
    t.is(messages[0]!.contentId, 'r1');
    t.is(headerOf(messages[0]!, 'Content-Type'), 'application/json;odata.metadata=minimal');
    t.is(jsonOf(messages[0]!).value!.length, 1);
    t.is(jsonOf(messages[1]!).SchemeName, 'Beta Yard');
    t.regex(headerOf(messages[1]!, 'ETag')!, /^"\d+"$/);
    t.is(messages[2]!.body.toString(), '4');
    t.is(statusOf(messages[3]!), 404);
    t.is(jsonOf(messages[3]!).error!.code, 'NotFound');
  },
);

test('malformed multipart is a 400 OData error, never a 5xx; another media type a 415', async (t) => {
  const b = 'bad';
  const get = part(b, 'GET Schemes HTTP/1.1');
  const cases: [string, string, RegExp][] = [
    ['multipart/mixed', `${get}--${b}--`, /boundary/],
    [`multipart/mixed; boundary=${b}`, get, /closing delimiter/],
    [`multipart/mixed; boundary=${b}`, `${part(b, 'GET Schemes')}--${b}--`, /request line/],
    [
      `multipart/mixed; boundary=${b}`,
      `${part(b, 'GET Schemes HTTP/1.1\r\nX: 1\r\n'.repeat(1) + `X-Big: ${'y'.repeat(20_000)}`)}--${b}--`,
      /exceed/,
    ],
    [
      `multipart/mixed; boundary=${b}`,
      `${changeset(b, 'c1', [changeset('c1', 'c2', [part('c2', 'GET Schemes HTTP/1.1')])])}--${b}--`,
      /nesting/,
    ],
    [`multipart/mixed; boundary=${b}`, `--${b}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${b}--`, /application\/http/],
  ];
  for (const [contentType, raw, says] of cases) {
    const res = await stack.request('POST', '/odata/$batch', { raw, headers: { 'content-type': contentType } });
    t.is(res.status, 400, String(says));
    const error = (res.body as { error: { code: string; message: string } }).error;
    t.regex(error.message, says);
  }
  const text = await stack.request('POST', '/odata/$batch', { raw: 'x', headers: { 'content-type': 'text/plain' } });
  t.is(text.status, 415);
  t.truthy((text.body as { error: unknown }).error);
  const get405 = await stack.get('/odata/$batch');
  t.is(get405.status, 405);
});

test('limits: more than BATCH_MAX_REQUESTS or BATCH_MAX_BYTES is a 413 OData error, in both formats, before anything runs', async (t) => {
  const many = Array.from({ length: MAX_REQUESTS + 1 }, (_, i) => ({ id: `r${i}`, method: 'GET', url: 'Schemes' }));
  const json = await jsonBatch(many);
  t.is(json.status, 413);
  t.regex((json.body as { error: { message: string } }).error.message, /BATCH_MAX_REQUESTS/);
  const b = 'many';
  const multi = await multipartBatch(
    many.map(() => part(b, 'GET Schemes HTTP/1.1')),
    b,
  );
  t.is(multi.status, 413);
  t.regex((multi.body as { error: { message: string } }).error.message, /BATCH_MAX_REQUESTS/);
  const big = await multipartBatch(
    [part(b, 'POST Addresses HTTP/1.1', JSON.stringify({ AddressLine: 'x'.repeat(MAX_BYTES) }))],
    b,
  );
  t.is(big.status, 413);
  t.regex((big.body as { error: { message: string } }).error.message, /BATCH_MAX_BYTES/);
});

test('@odata/client drives $batch: its multipart batch and its JSON batch', async (t) => {
  const client = OData.New4({ serviceEndpoint: `${stack.baseUrl}/odata/` });
  const answers = await client.execBatchRequests([
    client.newBatchRequest({ collection: 'Schemes', params: client.newOptions().top(2).select(['SchemeName']) }),
    client.newBatchRequest({ collection: 'Schemes', id: scheme(0) }),
  ]);
  t.is(answers.length, 2);
  t.is(answers[0]!.status, 200);
  const list = (await answers[0]!.json()) as { value: Doc[] };
  t.is(list.value.length, 2);
  const one = (await answers[1]!.json()) as Doc;
  t.is(one.SchemeName, 'Alpha Tower');
  const jsonAnswers = await client.execBatchRequestsJson([
    client.newBatchRequest({ collection: 'Addresses', params: client.newOptions().top(1) }),
  ]);
  t.is(jsonAnswers[0]!.status, 200);
  t.is(((await jsonAnswers[0]!.json()) as { value: Doc[] }).value.length, 1);
});

test('property: any JSON or multipart batch body answers without a 5xx, every 4xx an OData error', async (t) => {
  const url = fc.oneof(
    fc.constantFrom(
      'Schemes',
      `Schemes('${'h1am3Q'}')`,
      'Schemes/$count',
      `Schemes('h1am3Q')/Developments/$count`,
      `Schemes('h1am3Q')/Notes/$count`,
      '$1/Notes/$count',
      '$1',
      '/odata/Addresses?$top=1',
      '/Schemes',
      'Schemes?$filter=Nope',
      '$batch',
      'Schemes(',
      '%ZZ',
    ),
    fc.string({ maxLength: 12 }),
  );
  const method = fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'X');
  const request = fc.record({
    id: fc.constantFrom('1', '2', '3', 'a'),
    method,
    url,
    body: fc.option(fc.jsonValue(), { nil: undefined }),
  });
  const jsonBody = fc.array(request, { maxLength: 5 }).map((requests) => JSON.stringify({ requests }));
  const b = 'prop';
  const multipart = fc
    .array(
      fc.oneof(
        fc
          .tuple(method, url, fc.option(fc.constantFrom('1', '2'), { nil: undefined }))
          .map(([m, u, id]) => part(b, `${m} ${u} HTTP/1.1`, '', id)),
        fc.constantFrom(
          '--prop\r\n',
          '\r\n',
          'Content-Type: application/http\r\n',
          `--prop--`,
          'GET Schemes HTTP/1.1\r\n',
        ),
        fc
          .array(
            fc.tuple(method, url).map(([m, u]) => part('cs', `${m} ${u} HTTP/1.1`, '{}', '1')),
            { maxLength: 2 },
          )
          .map((ps) => changeset(b, 'cs', ps)),
      ),
      { maxLength: 5 },
    )
    .map((ps) => `${ps.join('')}--${b}--\r\n`);
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        jsonBody.map((raw) => ['application/json', raw] as const),
        multipart.map((raw) => [`multipart/mixed; boundary=${b}`, raw] as const),
      ),
      async ([type, raw]) => {
        // The contract check in stack.request throws on a 4xx that is not an OData error.
        const res = await stack.request('POST', '/odata/$batch', { raw, headers: { 'content-type': type } });
        if (res.status >= 500) throw new Error(`${res.status} for ${raw.slice(0, 300)}`);
      },
    ),
    { numRuns: 60 },
  );
  t.pass();
});

const countOf = async (table: string) => Number(((await stack.knex(table).count('* as n').first()) as { n: string }).n);

test.serial(
  'multipart: a changeset of writes commits as one, Content-ID references in the URL and in @odata.bind',
  async (t) => {
    const b = 'batch_w';
    const res = await multipartBatch(
      [
        changeset(b, 'cs_1', [
          part('cs_1', 'POST Addresses HTTP/1.1', JSON.stringify({ AddressLine: '1 Mill Lane', City: 'Leeds' }), '1'),
          part(
            'cs_1',
            'POST Schemes HTTP/1.1',
            JSON.stringify({ SchemeName: 'Mill', 'Address@odata.bind': '$1' }),
            '2',
          ),
          part('cs_1', 'PATCH $1 HTTP/1.1', JSON.stringify({ City: 'York' }), '3'),
        ]),
        part(b, "GET Schemes?$filter=SchemeName eq 'Mill'&$expand=Address HTTP/1.1"),
      ],
      b,
    );
    t.is(res.status, 200);
    const [cs, get] = await answerParts(res);
    const messages = (cs as { changeset: HttpMessage[] }).changeset;
    t.deepEqual(
      messages.map((m) => [m.contentId, statusOf(m)]),
      [
        ['1', 201],
        ['2', 201],
        ['3', 204],
      ],
    );
    const created = jsonOf(messages[1]!);
    t.is(created['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes/$entity`);
    t.regex(headerOf(messages[0]!, 'Location')!, new RegExp(`^${stack.baseUrl}/odata/Addresses\\('`));
    const found = jsonOf((get as { message: HttpMessage }).message).value!;
    t.is(found.length, 1);
    t.deepEqual((found[0]!.Address as Doc).City, 'York');
    t.is((found[0]!.Address as Doc).Id, jsonOf(messages[0]!).Id);
  },
);

test.serial('multipart: a changeset that fails half-way answers one OData error and leaves nothing', async (t) => {
  const before = { addresses: await countOf('addresses'), schemes: await countOf('schemes') };
  const b = 'batch_f';
  const res = await multipartBatch(
    [
      changeset(b, 'cs_f', [
        part('cs_f', 'POST Addresses HTTP/1.1', JSON.stringify({ AddressLine: '9 Lost Road' }), 'a'),
        part('cs_f', 'POST Schemes HTTP/1.1', JSON.stringify({ TotalUnits: 'many', 'Address@odata.bind': '$a' }), 's'),
        part('cs_f', 'PATCH $a HTTP/1.1', JSON.stringify({ City: 'Nowhere' }), 'p'),
      ]),
      part(b, 'GET Addresses/$count HTTP/1.1'),
    ],
    b,
  );
  t.is(res.status, 200);
  const [failed, count] = (await answerParts(res)) as { message: HttpMessage }[];
  t.true(failed && 'message' in failed, 'one response in place of the changeset');
  t.is(statusOf(failed!.message), 400);
  t.is(failed!.message.contentId, 's');
  const error = jsonOf(failed!.message).error!;
  t.is(error.code, 'Validation');
  t.true((error.details as Doc[]).length > 0);
  t.is(count!.message.body.toString(), String(before.addresses));
  t.is(await countOf('addresses'), before.addresses, 'the address of the failed changeset was not kept');
  t.is(await countOf('schemes'), before.schemes);
  t.is((await stack.knex('addresses').where({ address_line: '9 Lost Road' })).length, 0);
});

test.serial(
  'JSON format: an atomicity group of writes with @odata.bind references; a failed group answers §12 and writes nothing',
  async (t) => {
    const ok = await jsonBatch([
      { id: 'a1', atomicityGroup: 'g1', method: 'POST', url: 'Addresses', body: { AddressLine: '5 Weir St' } },
      {
        id: 's1',
        atomicityGroup: 'g1',
        method: 'POST',
        url: 'Schemes',
        headers: { Prefer: 'return=minimal' },
        body: { SchemeName: 'Weir', 'Address@odata.bind': '$a1' },
      },
      { id: 'r1', dependsOn: ['g1'], method: 'GET', url: '$s1?$expand=Address' },
    ]);
    const r = responsesOf(ok);
    t.is(r.a1!.status, 201);
    t.is(r.s1!.status, 204);
    t.regex(r.s1!.headers['odata-entityid']!, /\/odata\/Schemes\('/);
    t.is(r.s1!.headers['preference-applied'], 'return=minimal');
    t.is(r.r1!.status, 200);
    t.is((r.r1!.body!.Address as Doc).Id, r.a1!.body!.Id);
    t.is(r.r1!.body!['@odata.context'], `${stack.baseUrl}/odata/$metadata#Schemes/$entity`);

    const before = await countOf('addresses');
    const bad = await jsonBatch([
      { id: 'b1', atomicityGroup: 'g2', method: 'POST', url: 'Addresses', body: { AddressLine: '6 Weir St' } },
      { id: 'b2', atomicityGroup: 'g2', method: 'PATCH', url: "Addresses('zzzzzz')", body: { City: 'x' } },
      { id: 'b3', dependsOn: ['g2'], method: 'GET', url: 'Addresses' },
    ]);
    const f = responsesOf(bad);
    t.is(f.b2!.status, 404);
    t.is(f.b2!.body!.error!.code, 'NotFound');
    t.is(f.b1!.status, 424);
    t.regex(f.b1!.body!.error!.message as string, /'b2' of atomicity group 'g2' failed/);
    t.is(f.b3!.status, 424);
    t.is(await countOf('addresses'), before);
  },
);

test.serial('@odata/client drives a write through its multipart batch (a changeset per write)', async (t) => {
  const client = OData.New4({ serviceEndpoint: `${stack.baseUrl}/odata/` });
  const answers = await client.execBatchRequests([
    client.newBatchRequest({ collection: 'Addresses', method: 'POST', entity: { AddressLine: '7 Client Row' } }),
    client.newBatchRequest({
      collection: 'Addresses',
      params: client.newOptions().filter("AddressLine eq '7 Client Row'"),
    }),
  ]);
  t.is(answers[0]!.status, 201);
  const created = (await answers[0]!.json()) as Doc;
  t.is(created.AddressLine, '7 Client Row');
  const list = (await answers[1]!.json()) as { value: Doc[] };
  t.deepEqual(
    list.value.map((a) => a.Id),
    [created.Id],
  );
});

test('BATCH_MAX_READ_ROWS counts an /odata page as OData pages it: odata.maxpagesize, within $top', async (t) => {
  const big = { id: 'big', method: 'GET', url: 'Schemes', headers: { Prefer: 'odata.maxpagesize=600' } };
  const refused = await jsonBatch([big]);
  t.is(refused.status, 400);
  t.regex((refused.body as { error: { message: string } }).error.message, /BATCH_MAX_READ_ROWS.*'big'/s);
  const small = await jsonBatch([{ ...big, url: 'Schemes?$top=3' }]);
  t.is(small.status, 200);
  t.is(responsesOf(small).big!.body!.value!.length, 3);
});
