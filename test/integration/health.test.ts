import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import express from 'express';
import { healthHandlers, READINESS_CACHE_MS } from '../../api/health/health.routes';
import { createRedis } from '../../infra/redis';
import { startStack, type Stack } from '../support/stack';

let stack: Stack;
test.before(async () => {
  stack = await startStack({ workers: [] });
});
test.after.always(async () => {
  await stack?.close();
});

test('live and ready answer 200 when both stores answer', async (t) => {
  const live = await stack.get('/health/live');
  t.is(live.status, 200);
  const ready = await stack.get('/health/ready');
  t.is(ready.status, 200);
  t.deepEqual(ready.body, { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
});

test('X-Request-Id is echoed when sane and generated otherwise', async (t) => {
  const echoed = await stack.get('/health/live', { 'x-request-id': 'abc-123' });
  t.is(echoed.headers.get('x-request-id'), 'abc-123');
  const generated = await stack.get('/health/live', { 'x-request-id': 'bad id with spaces' });
  t.regex(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test('unknown routes get a problem body', async (t) => {
  const res = await stack.get('/NoSuchThing');
  t.is(res.status, 404);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.like(res.body as object, { type: 'about:blank', title: 'Not Found', status: 404 });
});

test('malformed JSON and oversized bodies are 400 and 413 problems, never a stack trace', async (t) => {
  const bad = await stack.request('POST', '/Schemes', {
    raw: '{"SchemeName": ',
    headers: { 'content-type': 'application/json' },
  });
  t.is(bad.status, 400);
  t.like(bad.body as object, { title: 'Bad Request', status: 400 });
  t.notRegex(bad.text, /at .*\.js|SyntaxError/);
  const big = await stack.request('POST', '/Schemes', {
    raw: JSON.stringify({ SchemeName: 'x'.repeat(1.1 * 1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  t.is(big.status, 413);
  t.like(big.body as object, { title: 'Payload Too Large', status: 413 });
});

// Serial, so no other test's probe runs a check meanwhile (ava runs serial tests before the others).
test.serial('/health/ready is answered from one check a second, however many probes arrive', async (t) => {
  let checks = 0;
  const count = (query: { sql: string }) => {
    if (query.sql === 'select 1') checks += 1;
  };
  stack.knex.on('query', count);
  t.teardown(() => stack.knex.off('query', count));
  const redis = createRedis(stack.config.redis, 'producer');
  t.teardown(() => redis.disconnect());
  // The producer connection refuses commands until it is connected (no offline queue).
  if (redis.status !== 'ready') await once(redis, 'ready');
  // The routes on the stack's stores, with a clock the test moves: the count cannot depend on how fast probes are.
  let clock = 1_000_000;
  const server = express()
    .get('/health/ready', healthHandlers(stack.knex, redis, undefined, () => clock).healthReady)
    .listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health/ready`;
  const probes = async (n: number) =>
    (await Promise.all(Array.from({ length: n }, () => fetch(url)))).map((r) => r.status);

  t.deepEqual(await probes(60), Array<number>(60).fill(200));
  t.is(checks, 1, 'sixty probes at once, one check');
  clock += READINESS_CACHE_MS - 1;
  t.deepEqual(await probes(20), Array<number>(20).fill(200));
  t.is(checks, 1, 'still within the second');
  clock += 1;
  t.deepEqual(await probes(20), Array<number>(20).fill(200));
  t.is(checks, 2, 'a second later, one more');
});
