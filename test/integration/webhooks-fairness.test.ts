import test, { type ExecutionContext } from 'ava';
import path from 'node:path';
import { startStack, type Stack } from '../support/stack';
import { create, waitFor } from '../support/writes';
import { receiverPool } from '../support/webhook-receiver';
import { testQueue } from '../support/queues';
import { QUEUE } from '../../domain/queues/queue-contracts';

/**
 * Webhook deliveries under a hostile or broken receiver (issue 24, findings 6 and 7), on the real
 * stack with receivers on 127.0.0.1: one receiver that holds every request cannot delay another
 * subscription's deliveries (WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION); a subscription deleted while its
 * attempt is under way ends the job quietly; a failed job's reason and stack trace, as /Jobs and
 * Bull Board show them, carry no SQL and no absolute path.
 */

const SCHEDULE = ['200ms', '400ms'];

let stack: Stack;
const receivers = receiverPool();
test.before(async () => {
  stack = await startStack({
    env: {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','),
      // Longer than any wait below: a held request stays held until the test lets it go.
      WEBHOOK_TIMEOUT_MS: '60000',
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '2',
    },
  });
});
test.after.always(async () => {
  await receivers.closeAll();
  await stack?.close();
});

const receiver = () => receivers.start();

async function subscribe(t: ExecutionContext, body: Record<string, unknown>): Promise<{ Id: string }> {
  const res = await stack.request('POST', '/Subscriptions', { body });
  t.is(res.status, 201, res.text);
  return res.body as { Id: string };
}

async function deliveries(id: string): Promise<{ Attempt: number; StatusCode: number | null }[]> {
  const res = await stack.get(`/Subscriptions/${id}/Deliveries?$top=100`);
  if (res.status !== 200) throw new Error(res.text);
  return res.body as { Attempt: number; StatusCode: number | null }[];
}

interface JobEntry {
  Id: string;
  State: string;
  Attempts: number;
  FailedReason: string | null;
}

/** The job as /Jobs shows it; undefined while the dispatcher has not added it yet. */
async function webhookJob(id: string): Promise<JobEntry | undefined> {
  const res = await stack.get(`/Jobs/webhooks/${encodeURIComponent(id)}`);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(res.text);
  return res.body as JobEntry;
}

/** The delivery job of the one event of entity `entityId` to subscription row `subscriptionId`. */
async function jobIdOf(entityId: string, subscriptionId: number): Promise<string> {
  const row = await waitFor(
    async () =>
      (await stack.knex('activities').where({ entity_id: entityId }).first('event_id')) as
        { event_id: string } | undefined,
  );
  return `wh-${row.event_id}-${subscriptionId}`;
}

async function subscriptionRow(url: string): Promise<number> {
  const row = (await stack.knex('webhook_subscriptions').where('url', url).first('id')) as { id: number };
  return row.id;
}

const SQL = /insert into|violates|foreign key|webhook_deliveries|constraint/i;

test.serial('a receiver that holds every request delays no other subscription’s deliveries', async (t) => {
  const [slow, fast] = [await receiver(), await receiver()];
  let release!: () => void;
  const released = new Promise<{ status: number }>((resolve) => (release = () => resolve({ status: 204 })));
  slow.answer = () => released;
  const slowSub = await subscribe(t, { Url: slow.url, Events: ['Company*'] });
  const fastSub = await subscribe(t, { Url: fast.url, Events: ['Company*'] });
  const events = 12;
  const companies: string[] = [];
  for (let i = 0; i < events; i++) companies.push(await create(stack, 'Companies', { Name: `Fair ${i}` }));

  // Every event reaches the fast receiver while the slow one still holds its first requests.
  await waitFor(async () => fast.received.length >= events, 30_000);
  t.true(slow.received.length <= 2, `the slow receiver holds at most its share (got ${slow.received.length})`);
  t.is((await deliveries(slowSub.Id)).length, 0, 'no attempt to the slow receiver has ended yet');
  t.is(fast.received.length, events, 'each event once');

  // Let it go: every event reaches the slow receiver too, each once, and a put-back is no attempt.
  release();
  await waitFor(async () => (await deliveries(slowSub.Id)).length >= events, 60_000);
  t.true((await deliveries(slowSub.Id)).every((d) => d.Attempt === 1 && d.StatusCode === 204));
  t.true((await deliveries(fastSub.Id)).every((d) => d.Attempt === 1 && d.StatusCode === 204));
  t.is(new Set(slow.received.map((r) => r.headers['webhook-id'])).size, events);
  const job = await webhookJob(await jobIdOf(companies.at(-1)!, await subscriptionRow(slow.url)));
  t.like(job, { State: 'completed', Attempts: 1 });
});

test.serial(
  'a subscription deleted while its failing attempt is recorded: the job ends quietly, no SQL, no retry',
  async (t) => {
    const hook = await receiver();
    let answer!: (status: number) => void;
    const held = new Promise<{ status: number }>((resolve) => (answer = (status) => resolve({ status })));
    hook.answer = () => held;
    await subscribe(t, { Url: hook.url, Events: ['MarketCreated'] });
    const id = await subscriptionRow(hook.url);
    const marketId = await create(stack, 'Markets', { Name: 'Deleted mid-attempt' });
    await waitFor(async () => hook.received.length === 1);

    // The subscription's delete is under way (its transaction holds the row) when the attempt fails
    // and is recorded: the record waits for the delete, which then commits.
    const trx = await stack.knex.transaction();
    try {
      await trx('webhook_subscriptions').where({ id }).delete();
      answer(500);
      await waitFor(async () => {
        const { rows } = await stack.knex.raw<{ rows: unknown[] }>(
          `select 1 from pg_stat_activity where wait_event_type = 'Lock' and query ilike 'insert into webhook_deliveries%'`,
        );
        return rows.length > 0;
      });
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }

    const jobId = await jobIdOf(marketId, id);
    const job = await waitFor(async () => {
      const entry = await webhookJob(jobId);
      return entry && ['completed', 'failed'].includes(entry.State) ? entry : undefined;
    }, 20_000);
    t.like(job, { State: 'completed', Attempts: 1, FailedReason: null });
    const queue = testQueue(stack.config, QUEUE.webhooks);
    t.teardown(() => queue.close());
    const stored = await queue.getJob(jobId);
    t.deepEqual(stored?.returnvalue, {
      skipped: 'the subscription was deleted during the attempt: nothing recorded, not retried',
    });
    t.notRegex(stored?.failedReason ?? '', SQL);
    t.is(hook.received.length, 1, 'not retried');
  },
);

test.serial(
  'a failed job’s reason and stack trace carry no SQL and no absolute path (/Jobs, Bull Board)',
  async (t) => {
    const hook = await receiver();
    hook.answer = () => ({ status: 500, body: `insert into webhook_deliveries values (1) violates foreign key` });
    await subscribe(t, { Url: hook.url, Events: ['PortfolioCreated'] });
    const portfolioId = await create(stack, 'Portfolios', { Name: 'Always failing' });
    const jobId = await jobIdOf(portfolioId, await subscriptionRow(hook.url));
    const job = await waitFor(async () => {
      const entry = await webhookJob(jobId);
      return entry?.State === 'failed' ? entry : undefined;
    }, 30_000);
    t.is(job.Attempts, SCHEDULE.length + 1);
    t.notRegex(job.FailedReason ?? '', SQL);
    t.regex(job.FailedReason ?? '', /worker log under job/);

    const root = path.resolve(__dirname, '../../..');
    const board = await stack.get('/admin/queues/api/queues?activeQueue=webhooks&status=failed');
    t.is(board.status, 200);
    t.true(board.text.includes(jobId), 'the board shows the failed job');
    t.false(board.text.includes(root), 'no absolute path of the project');
    t.false(board.text.includes('/work/'));
    t.notRegex(board.text, SQL);
    const queue = testQueue(stack.config, QUEUE.webhooks);
    t.teardown(() => queue.close());
    const stored = await queue.getJob(jobId);
    t.true((stored!.stacktrace ?? []).length > 0, 'a stack trace is kept');
    for (const trace of stored!.stacktrace ?? []) {
      t.false(trace.includes(root), trace);
      t.regex(trace, /\(workers\/notifications\//, 'frames named relative to the project');
    }
  },
);
