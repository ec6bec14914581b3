import test from 'ava';
import fc from 'fast-check';
import { DomainError } from '../../domain/errors/domain-error';
import {
  boundaryOf,
  parseMultipartBatch,
  renderMultipartBatch,
  type BatchPart,
  type HttpMessage,
} from '../../api/batch/multipart-batch';

/**
 * The multipart/mixed batch format of `/odata/$batch` (DESIGN §17, OData 4.0 Part 1 §11.7): what is
 * rendered reads back as the same parts (requests and responses, changesets included), and any
 * body at all is either parts or a 400/413 DomainError, never another exception.
 */

const LIMITS = { maxMessages: 50, maxHeaderBytes: 2048 };
const CT = (boundary: string) => `multipart/mixed; boundary=${boundary}`;

const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/);
const headerValue = fc.stringMatching(/^[ -~]{0,40}$/).map((v) => v.trim());
const headers = fc
  .array(fc.tuple(token, headerValue), { maxLength: 5 })
  .map((list) => list.filter(([name]) => !/^content-(id|type|transfer-encoding)$/i.test(name)));
// Bodies never hold a line break followed by `--` (what a boundary would be taken for); JSON never does.
const body = fc.oneof(
  fc.constant(''),
  fc.json().map((text) => text),
  fc.string({ maxLength: 80 }).map((text) => text.replace(/\n/g, ' ')),
);
const contentId = fc.option(fc.stringMatching(/^[A-Za-z0-9.-]{1,10}$/), { nil: undefined });
const url = fc.constantFrom(
  'Schemes',
  "Schemes('h1am3Q')",
  '$1',
  'http://x/odata/Addresses?$top=2',
  '/odata/Schemes/$count',
);

function message(kind: 'request' | 'response') {
  return fc
    .record({
      contentId,
      headers,
      body,
      method: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE'),
      url,
      status: fc.integer({ min: 200, max: 599 }),
    })
    .map((m): HttpMessage => ({
      ...(m.contentId === undefined ? {} : { contentId: m.contentId }),
      start: kind === 'request' ? { method: m.method, url: m.url } : { status: m.status },
      headers: m.headers as [string, string][],
      body: Buffer.from(m.body, 'utf8'),
    }));
}

function parts(kind: 'request' | 'response') {
  return fc.array(
    fc.oneof(
      message(kind).map((m): BatchPart => ({ message: m })),
      fc.array(message(kind), { minLength: 1, maxLength: 3 }).map((changeset): BatchPart => ({ changeset })),
    ),
    { maxLength: 6 },
  );
}

// Lower-case first, so no boundary is the start of a changeset's (`CS<n>_…`): RFC 2046 asks that
// no boundary begins another delimiter.
const boundary = fc.stringMatching(/^[a-z][A-Za-z0-9_'()+,.:=?-]{0,39}$/);
const changesetBoundary = (b: string) => (i: number) => `CS${i}_${b}`.slice(0, 70);

for (const kind of ['request', 'response'] as const) {
  test(`render then parse gives back the same ${kind} parts`, async (t) => {
    await fc.assert(
      fc.asyncProperty(parts(kind), boundary, async (given, b) => {
        const text = renderMultipartBatch(given, b, changesetBoundary(b));
        const parsed = await parseMultipartBatch(text, CT(b), LIMITS, kind);
        t.deepEqual(parsed, given);
        // And rendering what was parsed gives the same bytes.
        t.deepEqual(renderMultipartBatch(parsed, b, changesetBoundary(b)), text);
      }),
      { numRuns: 200 },
    );
  });
}

test('a batch as @odata/client and UI5 write it: CRLF, a changeset, Content-ID, a body', async (t) => {
  const text = [
    '--batch_1',
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    '',
    'GET Schemes?$top=1 HTTP/1.1',
    'Accept: application/json',
    '',
    '',
    '--batch_1',
    'Content-Type: multipart/mixed; boundary=changeset_a',
    '',
    '--changeset_a',
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    'Content-ID: 1',
    '',
    'POST Addresses HTTP/1.1',
    'Content-Type: application/json',
    '',
    '{"AddressLine":"1 Mill Lane"}',
    '--changeset_a--',
    '',
    '--batch_1--',
    '',
  ].join('\r\n');
  const parsed = await parseMultipartBatch(Buffer.from(text), CT('batch_1'), LIMITS);
  t.is(parsed.length, 2);
  const [get, changeset] = parsed as [{ message: HttpMessage }, { changeset: HttpMessage[] }];
  t.deepEqual(get.message.start, { method: 'GET', url: 'Schemes?$top=1' });
  t.is(get.message.body.toString(), '');
  t.is(changeset.changeset[0]!.contentId, '1');
  t.is(changeset.changeset[0]!.body.toString(), '{"AddressLine":"1 Mill Lane"}');
  // LF alone works too (some clients write it).
  const lf = await parseMultipartBatch(Buffer.from(text.replace(/\r\n/g, '\n')), CT('batch_1'), LIMITS);
  t.is(lf.length, 2);
});

async function refusal(text: string, contentType = CT('b'), limits = LIMITS) {
  try {
    await parseMultipartBatch(Buffer.from(text), contentType, limits);
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('parsed');
}

const part = (line: string, extra = '') =>
  `--b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n${extra}\r\n${line}\r\n\r\n\r\n`;

test('malformed multipart is a 400 naming the fault; too many requests a 413', async (t) => {
  const cases: [string, string, string?][] = [
    ['', 'needs a boundary', 'multipart/mixed'],
    [part('GET Schemes HTTP/1.1'), 'closing delimiter'],
    [`${part('GET Schemes HTTP/1.1')}--b`, 'closing delimiter'],
    ['no delimiter at all', 'no delimiter'],
    [`${part('GETSchemes')}--b--`, 'not a request line'],
    [`${part('GET Schemes HTTP/2')}--b--`, 'not a request line'],
    [`--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--`, 'must be application/http'],
    [
      `--b\r\nContent-Type: application/http\r\n${'X-Many: y\r\n'.repeat(60)}\r\nGET Schemes HTTP/1.1\r\n\r\n\r\n--b--`,
      'more than 50 header lines',
    ],
    [
      `--b\r\nContent-Type: application/http\r\nX-Long: ${'y'.repeat(3000)}\r\n\r\nGET Schemes HTTP/1.1\r\n\r\n\r\n--b--`,
      'exceed',
    ],
    [
      `--b\r\nContent-Type: application/http\r\nbad header\r\n\r\nGET Schemes HTTP/1.1\r\n\r\n\r\n--b--`,
      'malformed header',
    ],
    [
      `--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: multipart/mixed; boundary=d\r\n\r\n--d--\r\n--c--\r\n--b--`,
      'one level of nesting',
    ],
    [
      `--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\n${part('GET x HTTP/1.1').slice(4)}--b--`,
      'closing delimiter',
    ],
  ];
  for (const [text, says, contentType] of cases) {
    const err = await refusal(text, contentType);
    t.is(err.kind, 'BadRequest', says);
    t.true(err.errors[0]!.includes(says), `${says}: ${err.errors[0]}`);
  }
  const many = `${part('GET Schemes HTTP/1.1').repeat(3)}--b--`;
  const err = await refusal(many, CT('b'), { ...LIMITS, maxMessages: 2 });
  t.is(err.kind, 'TooLarge');
  t.regex(err.errors[0]!, /BATCH_MAX_REQUESTS/);
  t.throws(() => boundaryOf('multipart/mixed; boundary=' + 'x'.repeat(71)));
});

test('any bytes at all are parts or a DomainError (never another exception)', async (t) => {
  const pieces = fc.constantFrom(
    '--b',
    '--b--',
    '\r\n',
    '\n',
    'Content-Type: application/http',
    'Content-Type: multipart/mixed; boundary=c',
    '--c',
    '--c--',
    'GET Schemes HTTP/1.1',
    'HTTP/1.1 200 OK',
    'Content-ID: 1',
    ': x',
    '{"a":1}',
  );
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(pieces, fc.string({ maxLength: 5 })), { maxLength: 30 }), async (list) => {
      try {
        await parseMultipartBatch(Buffer.from(list.join('')), CT('b'), LIMITS);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        t.true(['BadRequest', 'TooLarge'].includes(err.kind));
      }
    }),
    { numRuns: 500 },
  );
  t.pass();
});
