import test from 'ava';
import { PRUNE_RETENTION_JOB, QUEUE } from '../../domain/queues/queue-contracts';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { eventually, testQueue } from '../support/queues';
import { startStack, type Stack } from '../support/stack';

/**
 * Retention keeps pace (DESIGN §13): one job scheduler for every command worker process, and each
 * run deletes everything older than the window, not one batch of it.
 */

let stack: Stack;
test.before(async () => {
  // Two command worker processes' worth of workers: the scheduler must still make one job per interval.
  stack = await startStack({
    workers: [(config) => startCommandWorker(config), (config) => startCommandWorker(config)],
    env: {
      RETENTION_INTERVAL_MS: '300',
      OUTBOX_RETENTION_HOURS: '24',
      COMMAND_LOG_RETENTION_HOURS: '168',
      WEBHOOK_DELIVERY_RETENTION_HOURS: '48',
    },
  });
});
test.after.always(async () => {
  await stack?.close();
});

test('every row older than its window goes in one run, several batches deep; newer and unpublished rows stay', async (t) => {
  const old = (hours: number) => stack.knex.raw(`now() - interval '${hours} hours'`);
  // 12,000 of each: more than two of the 5,000-row batches the old pruner stopped after.
  await stack.knex.raw(
    `insert into outbox (event_id, event, created_at, published_at)
     select gen_random_uuid(), '{}'::jsonb, now() - interval '30 hours', now() - interval '25 hours' from generate_series(1, 12000)`,
  );
  await stack.knex.raw(
    `insert into command_log (command_id, name, entity, subject, created_at)
     select 'old-' || g, 'CreateEntity', 'Scheme', 'someone', now() - interval '200 hours' from generate_series(1, 12000) g`,
  );
  await stack.knex('outbox').insert([
    { event_id: '00000000-0000-4000-8000-000000000001', event: {}, published_at: old(23) },
    { event_id: '00000000-0000-4000-8000-000000000002', event: {}, created_at: old(48), published_at: null },
  ]);
  await stack.knex('command_log').insert({
    command_id: 'recent',
    name: 'CreateEntity',
    entity: 'Scheme',
    subject: 'someone',
    created_at: old(100),
  });

  const count = async (table: string) => Number((await stack.knex(table).count({ n: '*' }))[0]!.n);
  await eventually(async () => (await count('outbox')) === 2 && (await count('command_log')) === 1, 60_000);
  t.deepEqual(
    (await stack.knex('outbox').select('event_id').orderBy('event_id')).map((r: { event_id: string }) => r.event_id),
    ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'],
  );
  t.deepEqual(
    (await stack.knex('command_log').select('command_id')).map((r: { command_id: string }) => r.command_id),
    ['recent'],
  );
});

test('webhook delivery attempts older than WEBHOOK_DELIVERY_RETENTION_HOURS go; newer ones stay', async (t) => {
  const [row] = (await stack
    .knex('webhook_subscriptions')
    .insert(
      { url: 'https://93.184.215.14/kept', events: JSON.stringify(['*']), secret: 'whsec_x', created_by: 'someone' },
      ['id'],
    )) as { id: number }[];
  const attempt = (hours: number, n: number) => ({
    subscription_id: row!.id,
    event_id: `00000000-0000-4000-8000-00000000000${n}`,
    event_type: 'SchemeCreated',
    attempt: 1,
    status_code: 204,
    duration_ms: 3,
    attempted_at: stack.knex.raw(`now() - interval '${hours} hours'`),
  });
  await stack.knex('webhook_deliveries').insert([attempt(72, 1), attempt(49, 2), attempt(47, 3), attempt(0, 4)]);
  const events = async () =>
    (await stack.knex('webhook_deliveries').select('event_id').orderBy('event_id')).map((r: { event_id: string }) =>
      r.event_id.slice(-1),
    );
  await eventually(async () => (await events()).length === 2, 60_000);
  t.deepEqual(await events(), ['3', '4']);
});

test('one job scheduler for the whole deployment, visible in /Jobs as the maintenance queue', async (t) => {
  const queue = testQueue(stack.config, QUEUE.maintenance);
  t.teardown(() => queue.close());
  const schedulers = await queue.getJobSchedulers();
  t.deepEqual(
    schedulers.map((s) => [s.key, s.every]),
    [[PRUNE_RETENTION_JOB, 300]],
  );
  const runs = await eventually(async () => {
    const res = await stack.get('/Jobs?queue=maintenance&state=completed');
    return (res.body as unknown[]).length > 0 ? (res.body as { Name: string }[]) : undefined;
  });
  t.is(runs[0]!.Name, PRUNE_RETENTION_JOB);
});
