import test from 'ava';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { otherCallerServedDuring, responsesOf, type BatchRequest, type BatchResponse } from '../support/batch';

/**
 * Every parser of client input does work linear in its input (issue 24: "look for any other
 * parser or validator whose cost can grow faster than its input"): the OData options' lexer and
 * parsers, `$search`'s scanner, the route label of any URL, the `uri` and `date-time` formats.
 * Each was timed at n and 8n characters on its worst shapes found (8 × the input, 1–9 × the time:
 * linear; the geometry parser it replaced was 60 ×). Here, the largest texts a client can send
 * (a URL within Node's 16 KB of headers; 8,192 characters, BATCH's URL limit, in a `$batch` of
 * 1,000) are answered as usual, never a 5xx, while another caller is served.
 */

let stack: Stack;
test.before(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
});
test.after.always(async () => {
  await stack?.close();
});

/** The hostile shapes, at `n` characters or so: the worst each parser met in the timing runs. */
function hostileUrls(n: number): string[] {
  const q = encodeURIComponent;
  return [
    `Companies?$filter=${q(`${'a'.repeat(n)} eq 1`)}`,
    `Companies?$filter=${q(`Name eq '${"''".repeat(n / 2)}'`)}`,
    `Companies?$filter=${q('2020-01-01'.repeat(n / 10))}`,
    `Companies?$filter=${q('-1'.repeat(n / 2))}`,
    `Companies?$filter=${'('.repeat(n)}`,
    `Companies?$filter=${q(`${' '.repeat(n)}Name eq 'x'`)}`,
    `Companies?$orderby=${Array(n / 2)
      .fill('Name')
      .join(',')}`,
    `Schemes?$expand=${'Address('.repeat(n / 8)}`,
    `Companies?$search=${q(`${'a'.repeat(n)}*`)}`,
    `Companies?$search=${q('-'.repeat(n))}`,
    `Companies?$search=${q(`${'a'.repeat(n)}:`)}`,
    `Companies?$search=${q('"a '.repeat(n / 3))}`,
    `Companies/${'%41'.repeat(n / 3)}`,
  ];
}

/** A client's answer: never a 5xx; a 4xx is a problem that names what was wrong. */
function isClientAnswer(res: { status: number; body?: unknown }): boolean {
  if (res.status === 200) return true;
  if (res.status < 400 || res.status >= 500) return false;
  const body = res.body as { title?: unknown; detail?: unknown; extensions?: { errors?: unknown[] } } | undefined;
  return typeof body?.title === 'string' && (typeof body.detail === 'string' || Array.isArray(body.extensions?.errors));
}

test('the longest option texts a URL can carry: answered as usual, never a 5xx', async (t) => {
  for (const url of hostileUrls(4_000)) {
    const res: HttpResult = await stack.get(`/${url}`);
    t.true(isClientAnswer(res), `${url.slice(0, 60)}…: ${res.status} ${res.text.slice(0, 200)}`);
  }
});

test('a $batch of 1,000 GETs at the URL limit: each a 200 or a problem, and another caller is served meanwhile', async (t) => {
  const urls = hostileUrls(7_000).filter((url) => url.length <= 8_192);
  const requests: BatchRequest[] = Array.from({ length: 1_000 }, (_, i) => ({
    id: `r${i}`,
    method: 'GET',
    url: urls[i % urls.length]!,
  }));
  const hostile = otherCallerServedDuring(t, stack, requests);
  const responses: BatchResponse[] = responsesOf(await hostile, requests);
  for (const r of responses) t.true(isClientAnswer(r), `${r.id}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
});

test('a multipart /odata/$batch of near BATCH_MAX_BYTES in its worst shapes is a 4xx while another caller is served', async (t) => {
  const size = 15 * 1024 * 1024;
  const shapes = [
    // Delimiter look-alikes at every line start: each is examined, none is a delimiter.
    `--b\r\n${'\r\n--bx'.repeat(size / 6)}`,
    // Millions of empty parts: refused once BATCH_MAX_REQUESTS of them are found.
    `${'--b\r\n'.repeat(size / 5)}--b--`,
    // One part whose headers never end.
    `--b\r\nContent-Type: application/http\r\n${'X'.repeat(size)}`,
  ];
  for (const raw of shapes) {
    const sent = Date.now();
    const hostile = stack.request('POST', '/odata/$batch', {
      raw,
      headers: { 'content-type': 'multipart/mixed; boundary=b' },
    });
    await new Promise((resolve) => setImmediate(resolve));
    const other = await stack.get('/Countries?$top=1');
    const took = Date.now() - sent;
    t.is(other.status, 200);
    t.true(took < 5_000, `GET /Countries?$top=1 took ${took} ms while the batch was parsed`);
    const res: HttpResult = await hostile;
    t.true(res.status === 400 || res.status === 413, `${res.status} ${res.text.slice(0, 200)}`);
  }
});
