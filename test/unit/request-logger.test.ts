import test from 'ava';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { requestLogger } from '../../api/http/request-logger';
import { createLogger } from '../../infra/logger';
import { eventually } from '../support/queues';

type Line = Record<string, unknown> & { req?: Record<string, unknown>; res?: Record<string, unknown> };

/** An app with the request logger writing JSON lines at `level` into an array. */
async function serve(level: string) {
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
  app.use(requestLogger(logger, { ignore: (url) => url.startsWith('/health/') }));
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

test('one completion line per request at the level of its status; nothing below the configured level', async (t) => {
  const app = await serve('info');
  t.teardown(app.close);
  await fetch(`${app.base}/health/live`); // first, so its line (were it written) would be there by the end
  const ok = await fetch(`${app.base}/ok`, { headers: { 'x-request-id': 'abc-123', authorization: 'Bearer secret' } });
  t.is(ok.headers.get('x-request-id'), 'abc-123');
  t.deepEqual(await ok.json(), { id: 'abc-123' });
  await fetch(`${app.base}/missing`, { headers: { authorization: 'Bearer secret' } });
  await fetch(`${app.base}/broken`);
  // The lines are written on 'finish', which may come after the client has its answer.
  await eventually(async () => app.lines.filter((l) => l.msg === 'request completed').length >= 2);

  const inside = app.lines.find((l) => l.msg === 'inside')!;
  t.is(inside.reqId, 'abc-123', 'req.log is bound to the request id');
  const completions = app.lines.filter((l) => l.msg === 'request completed');
  // The 200 is a debug line (not written at info); the health probe is never logged.
  t.deepEqual(
    completions.map((l) => [l.level, l.res?.statusCode, l.req?.url]),
    [
      [30, 404, '/missing'],
      [50, 500, '/broken'],
    ],
  );
  const missing = completions[0]!;
  t.is((missing.req!.headers as Record<string, string>).authorization, '[redacted]');
  t.is(typeof missing.responseTime, 'number');
  t.is(typeof missing.reqId, 'string');
  t.not(missing.reqId, 'abc-123', 'a request without X-Request-Id gets a generated one');
});

test('at debug level successful requests are logged too', async (t) => {
  const app = await serve('debug');
  t.teardown(app.close);
  await fetch(`${app.base}/ok`);
  const completion = await eventually(async () => app.lines.find((l) => l.msg === 'request completed'));
  t.like(completion, { level: 20, req: { method: 'GET', url: '/ok' }, res: { statusCode: 200 } });
});

test('tokens never reach a log line: query-string tokens and credential headers are redacted', async (t) => {
  const app = await serve('info');
  t.teardown(app.close);
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZSJ9.c2lnbmF0dXJl';
  await fetch(`${app.base}/missing?x=1&access_token=${jwt}&id_token=${jwt}#frag`, {
    headers: { authorization: `Bearer ${jwt}`, 'proxy-authorization': `Basic ${jwt}`, cookie: `s=${jwt}` },
  });
  const line = await eventually(async () => app.lines.find((l) => l.msg === 'request completed'));
  const text = JSON.stringify(line);
  t.false(text.includes(jwt), text);
  t.false(text.includes('c2lnbmF0dXJl'), text);
  t.is(line.req?.url, '/missing?x=1&access_token=[redacted]&id_token=[redacted]');
  t.is((line.req!.headers as Record<string, string>)['proxy-authorization'], '[redacted]');
});
