import test, { type ExecutionContext } from 'ava';
import { Webhook } from 'standardwebhooks';
import { startStack, type Stack } from '../support/stack';
import { create, patch, waitFor } from '../support/writes';
import { receiverPool, redisHolds, type Receiver } from '../support/webhook-receiver';
import { testQueue, TestQueues } from '../support/queues';
import { eventBurstJob } from '../../domain/queues/job-registry';
import type { DomainEvent } from '../../domain/events/domain-event';
import { QUEUE } from '../../domain/queues/queue-contracts';

/**
 * Webhook deliveries end to end (DESIGN §16) on the real stack, to receivers this test runs on
 * 127.0.0.1 (so WEBHOOK_ALLOW_PRIVATE_NETWORKS=true): signatures checked with the `standardwebhooks`
 * package (an independent implementation of the scheme), pattern matching and Active, retries on a
 * short WEBHOOK_RETRY_SCHEDULE with every attempt in `/Deliveries`, a receiver that never answers
 * (timeout → failed job in /Jobs → retried by hand), a subscription turned off while a retry is
 * pending, and a redirect that is not followed. Each test uses event types of its own entity.
 */

const SCHEDULE = ['200ms', '400ms'];

let stack: Stack;
const receivers = receiverPool();
test.before(async () => {
  stack = await startStack({
    env: {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','),
      WEBHOOK_TIMEOUT_MS: '1500',
    },
  });
});
test.after.always(async () => {
  await receivers.closeAll();
  await stack?.close();
});

const receiver = () => receivers.start();

interface Created {
  Id: string;
  Secret: string;
}

async function subscribe(t: ExecutionContext, body: Record<string, unknown>): Promise<Created> {
  const res = await stack.request('POST', '/Subscriptions', { body });
  t.is(res.status, 201, res.text);
  return res.body as Created;
}

interface Delivery {
  EventId: string;
  EventType: string;
  Attempt: number;
  StatusCode: number | null;
  DurationMs: number;
  Error: string | null;
  NextRetryAt: string | null;
  AttemptedAt: string;
}

async function deliveries(id: string): Promise<Delivery[]> {
  const res = await stack.get(`/Subscriptions/${id}/Deliveries`);
  if (res.status !== 200) throw new Error(res.text);
  return res.body as Delivery[];
}

async function eventIdOf(entityId: string, eventType: string): Promise<string> {
  const row = await waitFor(
    async () =>
      (await stack.knex('activities').where({ entity_id: entityId, event_type: eventType }).first('event_id')) as
        { event_id: string } | undefined,
  );
  return row.event_id;
}

/** No delivery job waiting, delayed or running: whatever was to be sent has been. */
async function queueSettled(): Promise<boolean> {
  const queue = testQueue(stack.config, QUEUE.webhooks);
  try {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    return Object.values(counts).every((n) => n === 0);
  } finally {
    await queue.close();
  }
}

test.serial(
  'a matching POST is delivered as { type, timestamp, data } and verifies with standardwebhooks',
  async (t) => {
    const hook = await receiver();
    const sub = await subscribe(t, { Url: `${hook.url}/in`, Events: ['SchemeCreated'] });
    const schemeId = await create(stack, 'Schemes', { SchemeName: 'Signed delivery' });
    await waitFor(async () => hook.received.length >= 1);
    const [got] = hook.received;
    const headers = got!.headers as Record<string, string>;
    // The independent implementation checks the signature (and the timestamp's freshness).
    const payload = new Webhook(sub.Secret).verify(got!.body, headers) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    t.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got!.body, headers));
    t.is(headers['content-type'], 'application/json');
    t.regex(headers['user-agent'] ?? '', /emapi-webhooks/);
    t.is(headers['webhook-id'], await eventIdOf(schemeId, 'SchemeCreated'));
    t.true(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 300);

    const activities = await stack.get(
      `/Activities?$filter=EntityId eq '${schemeId}' and EventType eq 'SchemeCreated'`,
    );
    t.is(activities.status, 200);
    const [activity] = activities.body as Record<string, unknown>[];
    t.deepEqual(payload, { type: 'SchemeCreated', timestamp: activity!.OccurredAt as string, data: activity! });

    await waitFor(async () => (await deliveries(sub.Id)).length === 1);
    const [attempt] = await deliveries(sub.Id);
    t.like(attempt, { EventId: headers['webhook-id'], EventType: 'SchemeCreated', Attempt: 1, StatusCode: 204 });
    t.is(attempt!.Error, null);
    t.is(attempt!.NextRetryAt, null);
    t.is(hook.received.length, 1, 'delivered once');
    // The secret is in Postgres only: no job, result or event stream in Redis holds it; Bull Board does not show it.
    t.false(await redisHolds(stack, sub.Secret));
    const board = await stack.get('/admin/queues/api/queues?activeQueue=webhooks&status=completed');
    t.is(board.status, 200);
    t.true(board.text.includes(headers['webhook-id']!), 'the board shows the delivery job');
    t.false(board.text.includes(sub.Secret));
  },
);

test.serial('patterns: exact, prefix* and *; only Active subscriptions receive', async (t) => {
  const [exact, prefix, all, other, off] = await Promise.all([1, 2, 3, 4, 5].map(() => receiver()));
  await subscribe(t, { Url: exact!.url, Events: ['CompanyCreated'] });
  await subscribe(t, { Url: prefix!.url, Events: ['Company*'] });
  await subscribe(t, { Url: all!.url, Events: ['*'] });
  await subscribe(t, { Url: other!.url, Events: ['PortfolioCreated', 'Market*'] });
  await subscribe(t, { Url: off!.url, Events: ['*'], Active: false });
  const companyId = await create(stack, 'Companies', { Name: 'Patterned' });
  const changed = await patch(stack, `/Companies/${companyId}`, [{ op: 'replace', path: '/Name', value: 'Renamed' }]);
  t.true(changed.status < 300, changed.text);
  await waitFor(async () => all!.received.length >= 2 && prefix!.received.length >= 2 && exact!.received.length >= 1);
  await waitFor(queueSettled);
  const types = (r: Receiver) => r.received.map((got) => (JSON.parse(got.body) as { type: string }).type).sort();
  t.deepEqual(types(exact!), ['CompanyCreated']);
  t.deepEqual(types(prefix!), ['CompanyCreated', 'CompanyUpdated']);
  t.deepEqual(types(all!), ['CompanyCreated', 'CompanyUpdated']);
  t.deepEqual(types(other!), []);
  t.deepEqual(types(off!), [], 'an inactive subscription receives nothing');
});

test.serial('a receiver failing twice: retried on the schedule, every attempt recorded, delivered once', async (t) => {
  const hook = await receiver();
  hook.answer = (n) => (n < 2 ? { status: n === 0 ? 500 : 503, body: 'not yet' } : { status: 200 });
  const sub = await subscribe(t, { Url: hook.url, Events: ['BuildingTypeCreated'] });
  await create(stack, 'BuildingTypes', { Name: 'Retried type' });
  await waitFor(async () => (await deliveries(sub.Id)).some((d) => d.StatusCode === 200), 20_000);
  await waitFor(queueSettled);
  const attempts = await deliveries(sub.Id);
  t.deepEqual(
    attempts.map((d) => [d.Attempt, d.StatusCode]),
    [
      [3, 200],
      [2, 503],
      [1, 500],
    ],
    'newest first',
  );
  t.is(attempts[0]!.NextRetryAt, null);
  t.is(attempts[0]!.Error, null);
  t.regex(attempts[1]!.Error ?? '', /^HTTP 503: not yet$/);
  for (const failed of attempts.slice(1)) {
    t.truthy(failed.NextRetryAt, 'a retry was scheduled');
    t.true(Date.parse(failed.NextRetryAt!) > Date.parse(failed.AttemptedAt));
  }
  t.is(hook.received.length, 3);
  t.is(new Set(hook.received.map((got) => got.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt');
  for (const got of hook.received) new Webhook(sub.Secret).verify(got.body, got.headers as Record<string, string>);
});

test.serial('a receiver that never answers: timeouts, a failed job in /Jobs, retried by hand once fixed', async (t) => {
  const hook = await receiver();
  hook.answer = () => 'hang';
  const sub = await subscribe(t, { Url: hook.url, Events: ['DevelopmentTypeCreated'] });
  await create(stack, 'DevelopmentTypes', { Name: 'Never answered' });
  const failed = await waitFor(async () => {
    const res = await stack.get('/Jobs?queue=webhooks&state=failed');
    return (res.body as { Id: string; FailedReason: string; Attempts: number }[])[0];
  }, 30_000);
  t.regex(failed.FailedReason, /timed out after 1500 ms/);
  t.is(failed.Attempts, SCHEDULE.length + 1);
  const attempts = await deliveries(sub.Id);
  t.is(attempts.length, SCHEDULE.length + 1);
  t.true(attempts.every((d) => d.StatusCode === null && /timed out/.test(d.Error ?? '')));
  t.is(attempts[0]!.NextRetryAt, null, 'no retry after the last attempt');
  t.is(hook.received.length, SCHEDULE.length + 1);

  hook.answer = () => ({ status: 202 });
  const retry = await stack.request('POST', `/Jobs/webhooks/${encodeURIComponent(failed.Id)}/retry`);
  t.is(retry.status, 202, retry.text);
  await waitFor(async () => (await deliveries(sub.Id)).some((d) => d.StatusCode === 202), 20_000);
  const job = await stack.get(`/Jobs/webhooks/${encodeURIComponent(failed.Id)}`);
  t.is((job.body as { State: string }).State, 'completed');
  t.is(hook.received.length, SCHEDULE.length + 2, 'delivered once more, by hand');
});

test.serial('a subscription turned off gets nothing further: its pending retry sends nothing', async (t) => {
  const hook = await receiver();
  let release!: (status: number) => void;
  const held = new Promise<{ status: number }>((resolve) => (release = (status) => resolve({ status })));
  hook.answer = (n) => (n === 0 ? held : { status: 204 });
  const sub = await subscribe(t, { Url: hook.url, Events: ['DevelopmentStatus*'] });
  const id = await create(stack, 'DevelopmentStatuses', { Name: 'Switched off' });
  await waitFor(async () => hook.received.length === 1);
  const off = await patch(stack, `/Subscriptions/${sub.Id}`, [{ op: 'replace', path: '/Active', value: false }]);
  t.is(off.status, 200, off.text);
  release(500); // the first attempt fails now; its retry finds the subscription off
  await waitFor(async () => (await deliveries(sub.Id)).length === 1);
  const updated = await patch(stack, `/DevelopmentStatuses/${id}`, [
    { op: 'replace', path: '/Name', value: 'Still off' },
  ]);
  t.true(updated.status < 300, updated.text);
  await waitFor(async () => (await stack.knex('activities').where({ entity_id: id })).length === 2);
  await waitFor(queueSettled, 20_000);
  t.is(hook.received.length, 1, 'nothing after it was turned off');
  // The pending retry completed without sending (its job says so in Bull Board: `skipped`).
  const { id: dbId } = (await stack.knex('webhook_subscriptions').where('url', hook.url).first('id')) as { id: number };
  const jobId = `wh-${await eventIdOf(id, 'DevelopmentStatusCreated')}-${dbId}`;
  const job = await stack.get(`/Jobs/webhooks/${jobId}`);
  t.like(job.body as object, { State: 'completed', Attempts: 2 });
  const [attempt] = await deliveries(sub.Id);
  t.like(attempt, { Attempt: 1, StatusCode: 500 });
});

test.serial('a redirect is not followed: a 3xx is a failed attempt and its target sees nothing', async (t) => {
  const [hook, elsewhere] = [await receiver(), await receiver()];
  hook.answer = () => ({ status: 302, headers: { location: `${elsewhere.url}/stolen` } });
  const sub = await subscribe(t, { Url: hook.url, Events: ['PortfolioCreated'] });
  await create(stack, 'Portfolios', { Name: 'Redirected' });
  await waitFor(async () => (await deliveries(sub.Id)).length === SCHEDULE.length + 1, 20_000);
  const attempts = await deliveries(sub.Id);
  t.true(attempts.every((d) => d.StatusCode === 302 && /redirects are not followed/.test(d.Error ?? '')));
  t.is(elsewhere.received.length, 0);
});

test.serial('a burst handled again sends nothing twice: the job id dedupes, then the recorded 2xx does', async (t) => {
  const hook = await receiver();
  const sub = await subscribe(t, { Url: hook.url, Events: ['MarketCreated'] });
  const marketId = await create(stack, 'Markets', { Name: 'Twice relayed' });
  await waitFor(async () => (await deliveries(sub.Id)).length === 1);
  await waitFor(queueSettled);
  const { event } = (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [marketId]).first('event')) as {
    event: DomainEvent;
  };
  const queues = new TestQueues(stack.config);
  t.teardown(() => queues.close());
  const { id: dbId } = (await stack.knex('webhook_subscriptions').where('url', hook.url).first('id')) as { id: number };
  const jobId = `wh-${event.eventId}-${dbId}`;
  // The same event in a burst of another shape (another job id): recorded again, its delivery job is the kept one.
  const other = { ...event, eventId: '00000000-0000-4000-8000-0000000000aa', name: 'BuildingTypeDeleted' };
  const burst = eventBurstJob([event, other]);
  await queues.run(QUEUE.notifications, burst.name, burst.data, burst.opts);
  await waitFor(queueSettled);
  t.is(hook.received.length, 1, 'the delivery job was there already');
  // With that job gone (past its retention), the burst adds a new one, which finds the 2xx recorded.
  await queues.queue(QUEUE.webhooks).remove(jobId);
  const again = eventBurstJob([event, { ...other, eventId: '00000000-0000-4000-8000-0000000000ab' }]);
  await queues.run(QUEUE.notifications, again.name, again.data, again.opts);
  await waitFor(async () => (await queues.queue(QUEUE.webhooks).getJobState(jobId)) === 'completed');
  const job = await queues.queue(QUEUE.webhooks).getJob(jobId);
  t.deepEqual(job?.returnvalue, { skipped: 'already delivered to this subscription: nothing sent again' });
  t.is(hook.received.length, 1, 'sent once');
  t.is((await deliveries(sub.Id)).length, 1);
});
