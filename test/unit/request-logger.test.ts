import test from 'ava';
import fc from 'fast-check';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { requestLogger } from '../../api/http/request-logger';
import { createLogger } from '../../infra/logger';
import { eventually } from '../support/queues';
import { secretCore, secretNameSpelling, secretValue } from '../support/secret-params';

type Line = Record<string, unknown>;

/** An app with the request logger writing JSON lines at `level` into an array. */
async function serve(level: string, accessLog = true) {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()) as Line);
      callback();
    },
  });
  // The service's own logger (its serializers and redaction), writing into the array.
  const logger = createLogger('test', level, sink);
  const app = express();
  app.use(requestLogger(logger, { ignore: (url) => url.startsWith('/health/'), accessLog }));
  app.use((req, _res, next) => {
    if (req.headers['x-subject']) req.caller = { subject: String(req.headers['x-subject']), roles: [] };
    next();
  });
  app.get('/health/live', (_req, res) => res.status(500).end());
  app.get('/ok', (req, res) => {
    req.log.warn('inside');
    res.json({ id: req.id });
  });
  app.get('/missing', (_req, res) => res.status(404).end());
  app.get('/broken', (_req, res) => res.status(500).end());
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { lines, base, close: () => new Promise((resolve) => server.close(resolve)) };
}

const completions = (lines: Line[]) => lines.filter((l) => l.msg === 'request completed');

test('the access log: one info line per request (5xx at error) with method, URL, status, duration, id, subject', async (t) => {
  const app = await serve('info');
  t.teardown(app.close);
  await fetch(`${app.base}/health/live`); // first, so its line (were it written) would be there by the end
  const ok = await fetch(`${app.base}/ok?$top=2`, {
    headers: { 'x-request-id': 'abc-123', authorization: 'Bearer secret', 'x-subject': 'alice' },
  });
  t.is(ok.headers.get('x-request-id'), 'abc-123');
  t.deepEqual(await ok.json(), { id: 'abc-123' });
  await fetch(`${app.base}/missing`, { headers: { authorization: 'Bearer secret' } });
  await fetch(`${app.base}/broken`, { method: 'GET' });
  // The lines are written on 'finish', which may come after the client has its answer.
  await eventually(async () => completions(app.lines).length >= 3);

  const inside = app.lines.find((l) => l.msg === 'inside')!;
  t.is(inside.requestId, 'abc-123', 'req.log is bound to the request id');
  // The health probe is never logged.
  t.deepEqual(
    completions(app.lines).map((l) => [l.level, l.method, l.url, l.status, l.subject]),
    [
      [30, 'GET', '/ok?$top=2', 200, 'alice'],
      [30, 'GET', '/missing', 404, undefined],
      [50, 'GET', '/broken', 500, undefined],
    ],
  );
  const [ok200, missing] = completions(app.lines);
  t.is(ok200!.requestId, 'abc-123');
  t.is(typeof ok200!.durationMs, 'number');
  t.true((ok200!.durationMs as number) >= 0);
  t.is(typeof missing!.requestId, 'string');
  t.not(missing!.requestId, 'abc-123', 'a request without X-Request-Id gets a generated one');
  t.false(JSON.stringify(app.lines).includes('secret'), 'no header is logged');
});

test('ACCESS_LOG=false: only 5xx requests are logged (at error); the rest are debug lines', async (t) => {
  const quiet = await serve('info', false);
  t.teardown(quiet.close);
  await fetch(`${quiet.base}/ok`);
  await fetch(`${quiet.base}/missing`);
  await fetch(`${quiet.base}/broken`);
  await eventually(async () => completions(quiet.lines).length >= 1);
  // 'finish' of the earlier requests came before the last answer was read: nothing else follows.
  t.deepEqual(
    completions(quiet.lines).map((l) => [l.level, l.url]),
    [[50, '/broken']],
  );

  const debug = await serve('debug', false);
  t.teardown(debug.close);
  await fetch(`${debug.base}/ok`);
  const completion = await eventually(async () => completions(debug.lines)[0]);
  t.like(completion, { level: 20, method: 'GET', url: '/ok', status: 200 });
});

test('tokens never reach a log line: query-string tokens are redacted, no header is logged', async (t) => {
  const app = await serve('info');
  t.teardown(app.close);
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZSJ9.c2lnbmF0dXJl';
  await fetch(`${app.base}/missing?x=1&access_token=${jwt}&id_token=${jwt}#frag`, {
    headers: { authorization: `Bearer ${jwt}`, 'proxy-authorization': `Basic ${jwt}`, cookie: `s=${jwt}` },
  });
  const line = await eventually(async () => completions(app.lines)[0]);
  const text = JSON.stringify(line);
  t.false(text.includes(jwt), text);
  t.false(text.includes('c2lnbmF0dXJl'), text);
  t.is(line.url, '/missing?x=1&access_token=[redacted]&id_token=[redacted]');
});

test('credentials are redacted by the decoded parameter name, however spelled (issue 24)', async (t) => {
  const app = await serve('info');
  t.teardown(app.close);
  const spellings = ['%61ccess_token', 'access_token%00', 'access%5Ftoken', 'Password', 'api_key', 'client%5Fsecret'];
  for (const [i, name] of spellings.entries()) {
    await fetch(`${app.base}/missing?$top=1&${name}=S3CR3Tvalue${i}`, { headers: { 'x-request-id': `spelling-${i}` } });
  }
  await fetch(`${app.base}/missing?$top=1&%E0%A4%A=S3CR3Tunparseable`, { headers: { 'x-request-id': 'unparseable' } });
  await eventually(async () => completions(app.lines).length >= spellings.length + 1);
  t.false(JSON.stringify(app.lines).includes('S3CR3T'), JSON.stringify(app.lines));
  t.deepEqual(
    completions(app.lines).map((line) => line.url),
    [...spellings.map((name) => `/missing?$top=1&${name}=[redacted]`), '/missing?[redacted]'],
  );
});

test('property: a secret-like name spelled any way never lets its value into the access log', async (t) => {
  const app = await serve('info');
  t.teardown(app.close);
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(secretNameSpelling, secretValue, async (name, value) => {
      await fetch(`${app.base}/ok?$top=1&${name}=${encodeURIComponent(value)}`);
      sent++;
      await eventually(async () => completions(app.lines).length >= sent);
      const line = JSON.stringify(completions(app.lines)[sent - 1]);
      t.false(line.includes(secretCore(value)), line);
    }),
    { numRuns: 200 },
  );
  t.false(JSON.stringify(app.lines).includes('S3CR3T'));
});
