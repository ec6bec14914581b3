import type { AddressInfo } from 'node:net';
import test from 'ava';
import express from 'express';
import type { Queue } from 'bullmq';
import { jobsHandlers } from '../../api/jobs/jobs.routes';
import { dispatcher } from '../../api/routes/dispatch';
import { ROUTES } from '../../api/routes/route-table';
import type { QueueRegistry } from '../../api/jobs/queue-registry';
import { errorHandler, notFoundHandler } from '../../api/http/error-handler';

/** With Redis unreachable, /Jobs answers 503 (the queues are down), not 500 (a bug). */

function appWith(reachable: boolean, cause: 'outage' | 'bug' = 'outage') {
  const failing = {
    name: 'views',
    getJobs: () =>
      Promise.reject(
        new Error(
          cause === 'outage'
            ? "Stream isn't writeable and enableOfflineQueue options is false"
            : 'WRONGTYPE Operation against a key holding the wrong kind of value',
        ),
      ),
    getJob: () => Promise.reject(new Error(cause === 'outage' ? 'Connection is closed.' : 'ERR unknown command')),
  } as unknown as Queue;
  const queues: QueueRegistry = {
    get: (name) => (name === 'views' ? failing : undefined),
    all: () => [failing],
    reachable: () => reachable,
    close: async () => undefined,
  };
  const app = express();
  // The /Jobs routes of the table alone, for an Admin (authentication is not what this tests).
  app.use((req, _res, next) => {
    req.caller = { subject: 'admin', roles: ['Admin'] };
    next();
  });
  app.use(dispatcher(ROUTES, jobsHandlers({ queues, maxTop: 100 })).authenticated);
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

async function get(reachable: boolean, path: string, cause: 'outage' | 'bug' = 'outage') {
  const server = appWith(reachable, cause).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as Record<string, unknown>,
    };
  } finally {
    server.close();
  }
}

test('queues unreachable: 503 problem for listings and single jobs', async (t) => {
  for (const path of ['/Jobs', '/Jobs/views/1']) {
    const res = await get(false, path);
    t.is(res.status, 503, path);
    t.deepEqual(res.body, {
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The job queues cannot be reached; try again shortly.',
    });
    t.is(res.retryAfter, '5', path);
  }
});

test('a connection lost before the registry noticed is still an outage: 503 with Retry-After', async (t) => {
  for (const path of ['/Jobs', '/Jobs/views/1']) {
    const res = await get(true, path);
    t.is(res.status, 503, path);
    t.like(res.body, { title: 'Service Unavailable', status: 503 });
    t.is(res.retryAfter, '5', path);
  }
});

test('queues reachable but failing for another reason: a plain 500 that says nothing of the cause', async (t) => {
  const res = await get(true, '/Jobs', 'bug');
  t.is(res.status, 500);
  t.deepEqual(res.body, {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    detail: 'An unexpected error occurred.',
  });
});

test('client mistakes stay 4xx even while the queues are down', async (t) => {
  t.is((await get(false, '/Jobs?state=nope')).status, 400);
  t.is((await get(false, '/Jobs/bogus/1')).status, 404);
});
