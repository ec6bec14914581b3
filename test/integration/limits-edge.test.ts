import fc from 'fast-check';
import test from 'ava';
import net from 'node:net';
import type { Queue } from 'bullmq';
import { createRedis } from '../../infra/redis';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { parseCsv } from '../support/csv';
import { eventually, testQueue } from '../support/queues';
import { startStack, type Stack } from '../support/stack';
import { uniqueQueuePrefix } from '../support/test-database';

/**
 * DESIGN §13 at the edge: Bull Board read-only, security headers, CSV formula escaping, the
 * per-subject rate limit shared by API processes, per-subject export slots and stalled readers.
 */

let stack: Stack;
test.before(async () => {
  stack = await startStack({ workers: [], env: { EXPORT_STALL_MS: '600', MAX_EXPORTS_PER_SUBJECT: '2' } });
});
test.after.always(async () => {
  await stack?.close();
});

function commandsQueue(s: Stack): Queue {
  return testQueue(s.config, QUEUE.commands);
}

test('Bull Board is read-only by default: job actions are refused and change nothing', async (t) => {
  const queue = commandsQueue(stack);
  t.teardown(() => queue.close());
  const before = await queue.getJobCounts();

  const add = await stack.request('POST', '/admin/queues/api/queues/commands/add', {
    body: { name: 'CreateEntity', data: { subject: 'someone-else', entity: 'Scheme' } },
  });
  t.is(add.status, 405, add.text);
  t.is(add.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.regex((add.body as { detail: string }).detail, /BULL_BOARD_READ_ONLY/);
  t.is(add.headers.get('allow'), 'GET, HEAD'); // a 405 names what the resource does answer (RFC 9110 §15.5.6)
  const pause = await stack.request('PUT', '/admin/queues/api/queues/commands/pause');
  t.is(pause.status, 405);

  t.deepEqual(await queue.getJobCounts(), before);
  t.false(await queue.isPaused());
  // The board itself still shows every queue, and tells its UI that it is read-only.
  const listed = await stack.get('/admin/queues/api/queues');
  t.is(listed.status, 200);
  const queues = (listed.body as { queues: { name: string; readOnlyMode: boolean }[] }).queues;
  t.true(queues.length >= 3 && queues.every((q) => q.readOnlyMode));
});

test('security headers on every answer; a CSP that allows nothing on the API and Bull Board page assets only from itself', async (t) => {
  const api = await stack.get('/Schemes');
  t.is(api.status, 200);
  const csp = api.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.is(api.headers.get('x-content-type-options'), 'nosniff');
  t.is(api.headers.get('x-frame-options'), 'DENY');
  t.truthy(api.headers.get('strict-transport-security'));
  t.is(api.headers.get('x-powered-by'), null);

  const problem = await stack.get('/NoSuchRoute');
  t.regex(problem.headers.get('content-security-policy') ?? '', /default-src 'none'/);

  const page = await stack.get('/admin/queues');
  t.is(page.status, 200);
  const boardCsp = page.headers.get('content-security-policy') ?? '';
  t.regex(boardCsp, /script-src 'self'/);
  t.notRegex(boardCsp, /script-src[^;]*unsafe/);
  // Every script, stylesheet and icon the page loads is its own (relative to its <base>): no CDN, no web font.
  const scripts = [...page.text.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]!);
  t.true(scripts.length > 0);
  for (const src of scripts) t.notRegex(src, /^(https?:)?\/\//, src);
  const links = [...page.text.matchAll(/<link[^>]*href="([^"]+)"/g)].map((m) => m[1]!);
  t.true(links.length > 0);
  for (const href of links) t.notRegex(href, /^(https?:)?\/\//, href);
  t.notRegex(boardCsp, /https:/);
  // Inline scripts other than JSON data blocks would be blocked by this CSP: there are none.
  const inline = [...page.text.matchAll(/<script(?![^>]*\ssrc=)([^>]*)>/g)].map((m) => m[1]!);
  for (const attrs of inline) t.regex(attrs, /type="application\/json"/);
  for (const src of scripts) {
    const asset = await fetch(`${stack.baseUrl}/admin/queues/${src}`);
    t.is(asset.status, 200, src);
  }
});

test.serial('CSV export escapes cells a spreadsheet would run as formulas; numbers stay numbers', async (t) => {
  const names = ['=HYPERLINK("http://evil.example","x")', '+1+2', '-cmd', '@SUM(A1)', '\tTab', 'Plain'];
  for (const name of names) await stack.knex('companies').insert({ name });
  await stack.knex('addresses').insert({ address_line: 'Formula Street', latitude: -33.5, longitude: -70.25 });
  const res = await stack.get('/Export/Companies');
  t.is(res.status, 200);
  const [header, ...rows] = parseCsv(res.text);
  const column = header!.indexOf('Name');
  t.deepEqual(
    rows.map((row) => row[column]),
    ['\'=HYPERLINK("http://evil.example","x")', "'+1+2", "'-cmd", "'@SUM(A1)", "'\tTab", 'Plain'],
  );
  const addresses = parseCsv((await stack.get('/Export/Addresses')).text);
  const lat = addresses[0]!.indexOf('Latitude');
  t.is(addresses[1]![lat], '-33.5');
});

test('RATE_LIMIT_PER_MINUTE is one budget per subject across API processes: 429 with Retry-After past it', async (t) => {
  const prefix = uniqueQueuePrefix();
  const env = { RATE_LIMIT_PER_MINUTE: '6', QUEUE_PREFIX: prefix };
  const [a, b] = await Promise.all([startStack({ workers: [], env }), startStack({ workers: [], env })]);
  t.teardown(() => Promise.all([a.close(), b.close()]));
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push((await a.get('/Schemes')).status, (await b.get('/Schemes')).status);
  t.deepEqual(answers, [200, 200, 200, 200, 200, 200]);
  const over = await a.get('/Schemes');
  t.is(over.status, 429);
  t.is(over.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.regex((over.body as { detail: string }).detail, /RATE_LIMIT_PER_MINUTE/);
  const retryAfter = Number(over.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
  t.is((await b.request('POST', '/Schemes', { body: {} })).status, 429, 'writes count too');
  // Health probes are not callers: never limited.
  t.is((await a.get('/health/live')).status, 200);
});

test.serial(
  'MAX_EXPORTS_PER_SUBJECT: a third export at once is a 429; a slot left by a dead process frees itself',
  async (t) => {
    const redis = createRedis(stack.config.redis, 'worker');
    t.teardown(() => redis.quit());
    const key = `${stack.config.queuePrefix}:exports:mock-user`;
    // Two exports running elsewhere (fresh heartbeats).
    await redis.zadd(key, Date.now(), 'other-process-1', Date.now(), 'other-process-2');
    const refused = await stack.get('/Export/Schemes');
    t.is(refused.status, 429);
    t.regex((refused.body as { detail: string }).detail, /MAX_EXPORTS_PER_SUBJECT/);
    t.truthy(refused.headers.get('retry-after'));
    // One of them died long ago: its heartbeat is stale, so its slot is free again.
    await redis.zadd(key, Date.now() - 10 * 60_000, 'other-process-1');
    t.is((await stack.get('/Export/Schemes')).status, 200);
    // The finished export gave its slot back: only the live one remains.
    await eventually(async () => (await redis.zrange(key, 0, -1)).join() === 'other-process-2');
    await redis.del(key);
  },
);

test.serial(
  'a stalled export reader is dropped after EXPORT_STALL_MS: its cursor, connection and slot are freed',
  async (t) => {
    // Enough rows that the export cannot fit in the socket buffers of a client that never reads.
    await stack.knex.raw(
      `insert into companies (name, registration_number) select 'Stalled export company ' || g || ' ' || repeat('x', 120), 'R' || g from generate_series(1, 120000) g`,
    );
    const redis = createRedis(stack.config.redis, 'worker');
    t.teardown(() => redis.quit());
    const key = `${stack.config.queuePrefix}:exports:mock-user`;
    const { port } = new URL(stack.baseUrl);
    const socket = net.connect(Number(port), '127.0.0.1');
    t.teardown(() => socket.destroy());
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET /Export/Companies HTTP/1.1\r\nHost: localhost\r\nAccept: text/csv\r\n\r\n`);
    let received = 0;
    await new Promise<void>((resolve) => {
      socket.once('data', (chunk: Buffer) => {
        received += chunk.length;
        socket.pause(); // and never read again
        resolve();
      });
    });
    t.true(received > 0);
    t.is(await redis.zcard(key), 1, 'the export holds a slot while it runs');
    // Dropped: the slot is given back and no backend runs the export's cursor any more.
    await eventually(async () => (await redis.zcard(key)) === 0, 30_000);
    const cursors = await stack.knex.raw<{ rows: unknown[] }>(
      `select pid from pg_stat_activity where datname = current_database() and query ilike '%from companies%' and pid <> pg_backend_pid() and state <> 'idle'`,
    );
    t.is(cursors.rows.length, 0);
    t.is(
      (await stack.get(`/Companies?$top=1&$filter=RegistrationNumber eq 'R1'`)).status,
      200,
      'the service serves on',
    );
  },
);

test('a URL past the header limit and malformed HTTP answer problem bodies, not bare status lines', async (t) => {
  const long = await fetch(
    `${stack.baseUrl}/Countries?$filter=${encodeURIComponent(`Name eq '${'x'.repeat(20_000)}'`)}`,
  );
  t.is(long.status, 431);
  t.is(long.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  const problem = (await long.json()) as { status: number; detail: string };
  t.is(problem.status, 431);
  t.regex(problem.detail, /16 KiB.*max-http-header-size.*\$batch/);

  const raw = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(new URL(stack.baseUrl).port), '127.0.0.1', () =>
      socket.write('GET /Countries HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'),
    );
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  t.regex(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.regex(raw, /content-type: application\/problem\+json/i);
  t.regex(raw, /"detail":"The request is not valid HTTP\/1\.1\."/);
  // Still serving afterwards.
  t.is((await stack.get('/Countries?$top=1')).status, 200);
});

/**
 * Sends `head` as an HTTP/1.1 request and reads the answer's head (the server closes the
 * connection after a malformed request, and keeps it open after a good one). The socket is not
 * half-closed: Node aborts requests whose client ended its side before they were answered.
 */
function rawExchange(head: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(new URL(stack.baseUrl).port), '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(head.slice(0, 200))}`)));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

test('any malformed request head gets a status line below 500, and a problem body when it is an error', async (t) => {
  const token = fc.stringMatching(/^[A-Za-z!#$%&'*+.^_`|~0-9-]{0,12}$/);
  const junk = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 40 });
  // A header line never ends the head early: an empty line there would make the rest a second,
  // pipelined request, and a connection whose second request is malformed is dropped whole (Node
  // writes no error over an answer in progress).
  const lineJunk = fc.string({
    unit: fc
      .integer({ min: 0, max: 255 })
      .filter((c) => c !== 10 && c !== 13)
      .map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 40,
  });
  const line = fc.oneof(
    fc.tuple(token, lineJunk).map(([name, value]) => `${name}: ${value}`),
    lineJunk,
    fc.constantFrom('Content-Length: -1', 'Content-Length: 1, 2', 'Transfer-Encoding: chunked, identity', 'Host:'),
  );
  const head = fc
    .tuple(
      fc.oneof(token, fc.constantFrom('GET', 'POST', 'PATCH')),
      fc.oneof(junk, fc.constant('/Countries')),
      fc.array(line, { maxLength: 5 }),
    )
    .map(
      ([method, target, lines]) =>
        `${method} ${target} HTTP/1.1\r\nHost: x\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`,
    );
  await fc.assert(
    fc.asyncProperty(head, async (sent) => {
      const answer = await rawExchange(sent);
      const status = /^HTTP\/1\.[01] (\d{3}) /.exec(answer);
      t.truthy(status, `no status line for ${JSON.stringify(sent)}: ${JSON.stringify(answer.slice(0, 200))}`);
      const code = Number(status![1]);
      t.true(code < 500, `${code} for ${JSON.stringify(sent)}`);
      if (code >= 400) t.regex(answer, /content-type: application\/problem\+json/i, JSON.stringify(sent));
    }),
    { numRuns: 150 },
  );
  t.is((await stack.get('/Countries?$top=1')).status, 200);
});
