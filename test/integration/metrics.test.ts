import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import test from 'ava';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startViewsWorker } from '../../workers/views/views-worker';
import { startNotificationsWorker } from '../../workers/notifications/notifications-worker';
import { Registry } from '../../infra/metrics/registry';
import { createLogger } from '../../infra/logger';
import { createRedis } from '../../infra/redis';
import { createKnex } from '../../db/knex';
import { createQueueRegistry } from '../../api/jobs/queue-registry';
import { registerApiMetrics } from '../../api/http/metrics';
import { uniqueQueuePrefix } from '../support/test-database';
import { settingsFromEnv, signToken } from '../../scripts/token';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { create, waitFor } from '../support/writes';

/**
 * Prometheus metrics (DESIGN §15) on the real stack: `/metrics` only with METRICS_ENABLED and
 * without a token, requests counted under their route pattern, commands and event lag counted by
 * the workers, the store gauges read at scrape time, and worker processes' METRICS_PORT (alone and
 * summed by their primary). Counts only: timings are never asserted.
 */

const AUTH = {
  AUTH_SECRET: 'a-local-secret-of-more-than-32-bytes!',
  AUTH_ISSUER: 'http://localhost/',
  AUTH_AUDIENCE: 'emapi-local',
};
const token = signToken({ roles: ['Admin'], subject: 'metrics-test', ttlSeconds: 600 }, settingsFromEnv(AUTH));
const AS_ADMIN = { authorization: `Bearer ${token}` };

/** One sample of Prometheus text: the value of `name` whose labels include `labels`, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total = (total ?? 0) + Number(match[3]);
  }
  return total;
}

/** The values the label `label` takes in the series `name`. */
function labelValues(text: string, name: string, label: string): Set<string> {
  const values = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const value = new RegExp(`[{,]${label}="((?:[^"\\\\]|\\\\.)*)"`).exec(line)?.[1];
    if (value !== undefined) values.add(value);
  }
  return values;
}

const running: Record<'commands' | 'views' | 'notifications', Registry | undefined> = {
  commands: undefined,
  views: undefined,
  notifications: undefined,
};

let off: Stack;
let on: Stack;
test.before(async () => {
  off = await startStack({ workers: [] });
  on = await startStack({
    env: { ...AUTH, METRICS_ENABLED: 'true' },
    workers: [
      async (config) => {
        const worker = await startCommandWorker(config);
        running.commands = worker.metrics;
        return worker;
      },
      async (config) => {
        const worker = await startViewsWorker(config);
        running.views = worker.metrics;
        return worker;
      },
      async (config) => {
        const worker = await startNotificationsWorker(config);
        running.notifications = worker.metrics;
        return worker;
      },
    ],
  });
});
test.after.always(async () => {
  await Promise.allSettled([off?.close(), on?.close()]);
});

async function scrape(stack: Stack): Promise<string> {
  const res = await stack.get('/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${res.text}`);
  return res.text;
}

test('without METRICS_ENABLED /metrics is a 404 like any unknown route', async (t) => {
  const metrics = await off.get('/metrics');
  const unknown = await off.get('/NoSuchThing');
  t.is(metrics.status, 404);
  t.is(metrics.headers.get('content-type'), unknown.headers.get('content-type'));
  t.like(metrics.body as object, { title: 'Not Found', status: 404 });
});

test('with it, /metrics answers Prometheus text without a token, defaults and store gauges included', async (t) => {
  t.is((await on.get('/Schemes')).status, 401, 'the stack does check tokens');
  const res = await on.get('/metrics');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  t.not(sample(res.text, 'process_cpu_user_seconds_total'), undefined, 'process defaults');
  t.not(sample(res.text, 'nodejs_eventloop_lag_seconds'), undefined, 'process defaults');
  for (const queue of ['commands', 'views', 'notifications']) {
    t.not(sample(res.text, 'emapi_queue_jobs', { queue, state: 'waiting' }), undefined, `${queue} waiting`);
    t.not(sample(res.text, 'emapi_queue_jobs', { queue, state: 'failed' }), undefined, `${queue} failed`);
  }
  t.not(sample(res.text, 'emapi_outbox_unpublished'), undefined);
  t.notRegex(res.text, /emapi_replica_lag_seconds/, 'replicas do not exist yet (issue 15)');
});

test.serial('requests are counted under their route pattern, never the raw key', async (t) => {
  const labels = { method: 'GET', route: '/Schemes/{key}', status: '404' };
  const before = sample(await scrape(on), 'http_request_duration_seconds_count', labels) ?? 0;
  const keys = ['S-ZZZZZZ1', 'S-ZZZZZZ2', '999999999'];
  for (const key of keys) t.is((await on.get(`/Schemes/${key}`, AS_ADMIN)).status, 404);
  t.is((await on.get('/Schemes?$top=1', AS_ADMIN)).status, 200);
  const text = await scrape(on);
  t.is(sample(text, 'http_request_duration_seconds_count', labels), before + keys.length);
  t.true((sample(text, 'http_request_duration_seconds_count', { route: '/Schemes', status: '200' }) ?? 0) >= 1);
  // Only the label sets: a sample's value (a float sum such as 1.2999999999999998) may hold any digits.
  const labelSets = text
    .split('\n')
    .filter((line) => line.startsWith('http_request_duration_seconds'))
    .map((line) => line.slice(0, line.lastIndexOf('}') + 1));
  for (const key of keys)
    t.false(
      labelSets.some((labels) => labels.includes(key)),
      `${key} appears in no label`,
    );
});

test.serial('arbitrary URLs add no route label values', async (t) => {
  const paths = [
    '/NoSuchThing',
    '/no/such/thing/at/all',
    '/Schemes/S-1/Companies/extra',
    '/%E2%9C%93',
    '/Export/Nothing',
    '/Jobs/commands/123/unknown/deeper',
    `/${'x'.repeat(200)}`,
    '/Commands/abc/def',
  ];
  await scrape(on);
  for (const p of paths) await on.get(p, AS_ADMIN);
  const routes = labelValues(await scrape(on), 'http_request_duration_seconds_count', 'route');
  t.true(routes.has('unmatched'));
  for (const route of routes) {
    t.regex(route, /^(unmatched|\/[A-Za-z$]+(\/(\{[a-z]+\}|[A-Za-z$]+))*)$/, route);
    t.false(paths.includes(route), `${route} is a pattern, not a URL`);
  }
  const again = `/also-${Date.now()}`;
  await on.get(again, AS_ADMIN);
  const after = labelValues(await scrape(on), 'http_request_duration_seconds_count', 'route');
  t.deepEqual([...after].sort(), [...routes].sort(), 'a new URL is one more count, not one more label value');
});

test.serial('a POST is counted by the command worker, and its event lag by both event workers', async (t) => {
  const labels = { command: 'create', entity: 'Company', outcome: 'ok' };
  const count = async (registry: Registry | undefined, name: string, l: Record<string, string>) =>
    sample(await registry!.metrics(), name, l) ?? 0;
  const before = await count(running.commands, 'emapi_command_duration_seconds_count', labels);
  const lagBefore = {
    views: await count(running.views, 'emapi_event_lag_seconds_count', { queue: 'views' }),
    notifications: await count(running.notifications, 'emapi_event_lag_seconds_count', { queue: 'notifications' }),
  };
  const res = await on.request('POST', '/Companies', { body: { Name: 'Metrics Ltd' }, headers: AS_ADMIN });
  t.is(res.status, 201);
  t.is(await count(running.commands, 'emapi_command_duration_seconds_count', labels), before + 1);
  t.is(await count(running.commands, 'emapi_command_duration_seconds_count', { outcome: 'error' }), 0);
  // A domain failure is a result too, counted under its kind; a batch and its group have labels of their own.
  const id = (res.headers.get('location') ?? '').split('/').pop()!;
  const gone = { command: 'delete', entity: 'Company' };
  const deletes = async (outcome: string) =>
    count(running.commands, 'emapi_command_duration_seconds_count', { ...gone, outcome });
  const [okBefore, notFoundBefore] = [await deletes('ok'), await deletes('NotFound')];
  t.is((await on.request('DELETE', `/Companies/${id}`, { headers: AS_ADMIN })).status, 204);
  t.is((await on.request('DELETE', `/Companies/${id}`, { headers: AS_ADMIN })).status, 404);
  t.is(await deletes('ok'), okBefore + 1);
  t.is(await deletes('NotFound'), notFoundBefore + 1);
  const batchOk = { command: 'batch', entity: '$batch', outcome: 'ok' };
  const groupOk = { command: 'group', entity: '$batch', outcome: 'ok' };
  const [batchesBefore, groupsBefore] = [
    await count(running.commands, 'emapi_command_duration_seconds_count', batchOk),
    await count(running.commands, 'emapi_command_duration_seconds_count', groupOk),
  ];
  const batch = await on.request('POST', '/$batch', {
    headers: AS_ADMIN,
    body: {
      requests: [
        { id: 'c1', atomicityGroup: 'g1', method: 'POST', url: 'Companies', body: { Name: 'Batch One' } },
        { id: 'c2', atomicityGroup: 'g1', method: 'POST', url: 'Companies', body: { Name: 'Batch Two' } },
      ],
    },
  });
  t.is(batch.status, 200, batch.text);
  t.is(await count(running.commands, 'emapi_command_duration_seconds_count', batchOk), batchesBefore + 1);
  t.is(await count(running.commands, 'emapi_command_duration_seconds_count', groupOk), groupsBefore + 1);
  await waitFor(async () => {
    const views = await count(running.views, 'emapi_event_lag_seconds_count', { queue: 'views' });
    const notes = await count(running.notifications, 'emapi_event_lag_seconds_count', { queue: 'notifications' });
    return views > lagBefore.views && notes > lagBefore.notifications;
  });
  t.pass();
});

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function spawnProcess(main: string, env: NodeJS.ProcessEnv): { child: ChildProcess; output(): string } {
  const child = spawn(process.execPath, [path.resolve(__dirname, main)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

for (const processes of [1, 2]) {
  test.serial(`a command worker serves its metrics on METRICS_PORT (${processes} process(es))`, async (t) => {
    // A stack of its own without an in-process command worker: the spawned one takes every command.
    const stack = await startStack({ workers: [startViewsWorker, startNotificationsWorker] });
    t.teardown(() => stack.close());
    const port = await freePort();
    const worker = spawnProcess('../../workers/commands/main.js', {
      ...workerProcessEnv(stack, { LOG_LEVEL: 'info', LISTEN_HOST: '127.0.0.1', METRICS_PORT: String(port) }),
      COMMAND_WORKER_PROCESSES: String(processes),
    });
    t.teardown(() => stop(worker.child));
    await waitFor(async () => worker.output().split('commands worker ready').length > processes, 20_000).catch(
      (err: unknown) => {
        throw new Error(`${(err as Error).message}: ${worker.output()}`);
      },
    );
    const url = `http://127.0.0.1:${port}`;
    const posts = 4;
    for (let i = 0; i < posts; i++) await create(stack, 'Companies', { Name: `Worker metrics ${i}` });
    const res = await fetch(`${url}/metrics`);
    t.is(res.status, 200);
    const text = await res.text();
    const labels = { command: 'create', entity: 'Company', outcome: 'ok' };
    // Under a primary this is the sum of both processes' counts: every command once.
    t.is(sample(text, 'emapi_command_duration_seconds_count', labels), posts);
    t.not(sample(text, 'process_cpu_user_seconds_total'), undefined);
    t.is((await fetch(`${url}/other`)).status, 404);
    t.is((await fetch(`${url}/metrics`, { method: 'POST' })).status, 405);
    await stop(worker.child);
    t.is(worker.child.exitCode, 0, worker.output());
  });
}

/** The buckets of a histogram without labels, in the order served: `[le, cumulative count]`. */
function buckets(text: string, name: string): [string, number][] {
  return [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`, 'gm'))].map((m) => [
    m[1]!,
    Number(m[2]),
  ]);
}

test.serial(
  'the API serves its event-loop delay as a histogram with cumulative buckets, one observation a second',
  async (t) => {
    const name = 'emapi_event_loop_delay_seconds';
    const first = await scrape(on);
    t.regex(first, new RegExp(`^# TYPE ${name} histogram$`, 'm'));
    const les = buckets(first, name).map(([le]) => le);
    t.deepEqual(les, [
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.075',
      '0.1',
      '0.15',
      '0.2',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '10',
      '30',
      '+Inf',
    ]);
    const before = sample(first, `${name}_count`) ?? 0;
    // A hostile but bounded request (the issue's nested geometry, refused by MAX_GEOMETRY_DEPTH).
    const deep = `${'GEOMETRYCOLLECTION('.repeat(4_900)}POINT(1 1)${')'.repeat(4_900)}`;
    const hostile = await on.request('POST', '/SchemeMarketBoundaries', {
      headers: AS_ADMIN,
      body: { Scheme: { Id: 'S-1' }, Market: { Id: 'M-1' }, Geometry: deep },
    });
    t.is(hostile.status, 400);
    // The histogram moves (each second adds an observation); its buckets stay cumulative.
    const text = await waitFor(async () => {
      const now = await scrape(on);
      return (sample(now, `${name}_count`) ?? 0) > before ? now : undefined;
    });
    const counts = buckets(text, name).map(([, n]) => n);
    for (let i = 1; i < counts.length; i++) t.true(counts[i]! >= counts[i - 1]!, `bucket ${les[i]} is cumulative`);
    t.is(counts.at(-1), sample(text, `${name}_count`));
    t.true(Number.isFinite(sample(text, `${name}_sum`)));
  },
);

test('a store that is down leaves its sample out and the scrape still answers', async (t) => {
  const logger = createLogger('metrics-test', 'silent');
  const knex = createKnex('postgres://postgres@127.0.0.1:1/nothing', 1, logger);
  const redis = createRedis({ url: 'redis://127.0.0.1:1' }, 'producer');
  redis.on('error', () => undefined);
  const prefix = uniqueQueuePrefix();
  const queues = createQueueRegistry(redis, { redis: { url: 'redis://127.0.0.1:1' }, queuePrefix: prefix }, logger);
  t.teardown(async () => {
    await queues.close();
    await knex.destroy();
    redis.disconnect();
  });
  const registry = new Registry();
  registerApiMetrics(registry, { knex, queues, logger });
  const text = await registry.metrics();
  t.is(sample(text, 'emapi_outbox_unpublished'), undefined);
  t.is(sample(text, 'emapi_queue_jobs'), undefined);
  t.regex(text, /# TYPE emapi_outbox_unpublished gauge/);
  // The same registry reads again once it can: the live stack's store gauges answer.
  t.not(sample(await scrape(on), 'emapi_outbox_unpublished'), undefined);
});

test.serial('API processes under one primary answer /metrics with the sum of all of them', async (t) => {
  const port = await freePort();
  const api = spawnProcess('../../api/main.js', {
    ...workerProcessEnv(on, { LOG_LEVEL: 'info', AUTH_MOCK: 'true', METRICS_ENABLED: 'true', PORT: String(port) }),
    API_PROCESSES: '2',
  });
  t.teardown(() => stop(api.child));
  await waitFor(async () => api.output().split('API listening').length > 2, 20_000).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}: ${api.output()}`);
  });
  const url = `http://127.0.0.1:${port}`;
  const requests = 12;
  for (let i = 0; i < requests; i++)
    t.is((await fetch(`${url}/health/live`, { headers: { connection: 'close' } })).status, 200);
  const text = await (await fetch(`${url}/metrics`)).text();
  t.is(sample(text, 'http_request_duration_seconds_count', { route: '/health/live', status: '200' }), requests);
  t.not(sample(text, 'emapi_outbox_unpublished'), undefined);
});
