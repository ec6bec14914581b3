import test from 'ava';
import { signCommand } from '../../domain/commands/command-signature';
import type { Command } from '../../domain/commands/command';
import { loadConfig } from '../../infra/config/load-config';
import { ALL_EVENT_NAMES } from '../../domain/events/domain-event';
import {
  JOBS,
  commandJob,
  EVENT_BURST_MAX,
  eventBurstJob,
  eventJob,
  jobKindOf,
  jobKindsOn,
  pruneRetentionSchedule,
  rebuildViewsJob,
  webhookDeliveryJob,
} from '../../domain/queues/job-registry';
import {
  ALL_QUEUES,
  EVENT_BURST_JOB,
  PRUNE_RETENTION_JOB,
  QUEUE,
  REBUILD_VIEWS_JOB,
  WEBHOOK_DELIVERY_JOB,
} from '../../domain/queues/queue-contracts';
import { startQueueWorker } from '../../workers/shared/worker-process';
import { makeEvent } from '../support/queues';

/**
 * The job registry (domain/queues/job-registry.ts): what each queue carries, the options every
 * producer adds its jobs with, and the start-time check that each kind of job has a handler.
 */

test('each queue carries its kinds of job, and a job name means one kind on its queue', (t) => {
  t.deepEqual(Object.fromEntries(ALL_QUEUES.map((queue) => [queue, jobKindsOn(queue)])), {
    commands: ['command', 'batch', 'subscription'],
    views: ['eventBurst', 'event', 'rebuildViews'],
    notifications: ['eventBurst', 'event'],
    maintenance: ['pruneRetention'],
    webhooks: ['webhookDelivery'],
  });
  for (const queue of ALL_QUEUES) {
    for (const kind of jobKindsOn(queue)) {
      t.true(JOBS[kind].names.length > 0, `${kind} has names`);
      for (const name of JOBS[kind].names) t.is(jobKindOf(queue, name), kind, `${queue}/${name}`);
    }
  }
  t.is(jobKindOf(QUEUE.views, 'SchemeUpdated'), 'event');
  t.is(jobKindOf(QUEUE.notifications, EVENT_BURST_JOB), 'eventBurst');
  t.is(jobKindOf(QUEUE.commands, 'batch'), 'batch');
  t.is(jobKindOf(QUEUE.views, REBUILD_VIEWS_JOB), 'rebuildViews');
  t.is(jobKindOf(QUEUE.notifications, REBUILD_VIEWS_JOB), undefined, 'rebuilds go to the views queue only');
  t.is(jobKindOf(QUEUE.commands, 'SchemeUpdated'), undefined);
  t.is(jobKindOf(QUEUE.views, 'create'), undefined);
  t.deepEqual(JOBS.event.names, ALL_EVENT_NAMES, 'every event the command workers emit');
  t.is(jobKindOf(QUEUE.commands, 'subscription-create'), 'subscription');
  t.is(jobKindOf(QUEUE.webhooks, WEBHOOK_DELIVERY_JOB), 'webhookDelivery');
});

test('a webhook delivery job: its id derives from the event and the subscription, and BullMQ takes it', (t) => {
  const data = { eventId: '6f1c1d7e-58b5-4b53-9b36-8f3c2a0e6a11', eventType: 'SchemeCreated', subscriptionId: 12 };
  const job = webhookDeliveryJob(data, 3);
  t.is(job.opts.jobId, 'wh-6f1c1d7e-58b5-4b53-9b36-8f3c2a0e6a11-12');
  t.deepEqual(webhookDeliveryJob({ ...data }, 3).opts.jobId, job.opts.jobId, 'the same delivery, the same id');
  t.not(webhookDeliveryJob({ ...data, subscriptionId: 13 }, 3).opts.jobId, job.opts.jobId);
  // BullMQ refuses custom ids that are integers or hold `:`.
  t.false(job.opts.jobId!.includes(':'));
  t.not(String(parseInt(job.opts.jobId!, 10)), job.opts.jobId);
  t.is(job.opts.attempts, 3);
  t.deepEqual(job.opts.backoff, { type: 'webhook-schedule', delay: 0 });
  t.is(JOBS.webhookDelivery.options.attempts, 8, 'the default schedule: 7 retries');
});

test('producers add their jobs with their kind options and job id rule', (t) => {
  const command: Command = {
    commandId: '6f1c1d7e-58b5-4b53-9b36-8f3c2a0e6a11',
    name: 'create',
    entity: 'Company',
    subject: 'someone',
    body: { Name: 'X' },
    issuedAt: new Date().toISOString(),
  };
  const signed = signCommand(command, 'k'.repeat(32));
  t.deepEqual(commandJob(signed), {
    name: 'create',
    data: signed,
    opts: { ...JOBS.command.options, jobId: command.commandId },
  });

  const event = makeEvent('Scheme', 'Updated', 7);
  t.deepEqual(eventJob(event), {
    name: 'SchemeUpdated',
    data: event,
    opts: { ...JOBS.event.options, jobId: event.eventId },
  });

  // A burst's id is a digest of its events' ids: the same burst published twice is one job.
  const events = [event, makeEvent('Company', 'Created', 3), makeEvent('Scheme', 'Deleted', 9)];
  const burst = eventBurstJob(events);
  t.deepEqual(
    { ...burst, opts: { ...burst.opts, jobId: undefined } },
    {
      name: EVENT_BURST_JOB,
      data: { events },
      opts: { ...JOBS.eventBurst.options, jobId: undefined },
    },
  );
  t.regex(burst.opts.jobId!, /^burst-[0-9a-f]{40}$/);
  t.is(eventBurstJob([...events]).opts.jobId, burst.opts.jobId);
  t.not(eventBurstJob(events.slice(0, 2)).opts.jobId, burst.opts.jobId);
  t.not(eventBurstJob([events[1]!, events[0]!, events[2]!]).opts.jobId, burst.opts.jobId);
  t.throws(() => eventBurstJob([]), { instanceOf: RangeError });
  t.throws(() => eventBurstJob(Array.from({ length: EVENT_BURST_MAX + 1 }, () => event)), { instanceOf: RangeError });

  const rebuild = rebuildViewsJob('admin');
  t.deepEqual(rebuild, { name: REBUILD_VIEWS_JOB, data: { requestedBy: 'admin' }, opts: JOBS.rebuildViews.options });
  t.false('jobId' in rebuild.opts, 'every rebuild request is a job of its own');

  t.deepEqual(pruneRetentionSchedule(300), {
    schedulerId: PRUNE_RETENTION_JOB,
    repeat: { every: 300 },
    template: { name: PRUNE_RETENTION_JOB, opts: JOBS.pruneRetention.options },
  });
});

test('every kind of job keeps its finished jobs a while: no job is removed the moment it ends', (t) => {
  for (const [kind, { options }] of Object.entries(JOBS)) {
    t.true(options.attempts >= 1, kind);
    for (const keep of [options.removeOnComplete, options.removeOnFail]) t.true(keep.count > 0, kind);
  }
});

// The check runs before the worker touches Redis or Postgres: these addresses are never reached.
const config = loadConfig({
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  REDIS_URL: 'redis://127.0.0.1:1',
  COMMAND_SIGNING_KEY: 'k'.repeat(32),
  LOG_LEVEL: 'silent',
});
const handler = async () => null;

test('a worker refuses to start when a kind of job its queue carries has no handler', async (t) => {
  const views = await t.throwsAsync(
    startQueueWorker(config, QUEUE.views, () => ({ eventBurst: handler, event: handler }) as never),
  );
  t.is(views.message, 'queue views: no handler for rebuildViews (rebuild-views)');

  const notifications = await t.throwsAsync(startQueueWorker(config, QUEUE.notifications, () => ({}) as never));
  t.regex(
    notifications.message,
    /^queue notifications: no handler for eventBurst \(event-burst\); event \(\w+Created, \w+Updated, \w+Deleted, … \d+ names\)$/,
  );
});

test('a worker refuses to start with a handler for a kind of job its queue never carries', async (t) => {
  const err = await t.throwsAsync(
    startQueueWorker(
      config,
      QUEUE.notifications,
      () => ({ eventBurst: handler, event: handler, rebuildViews: handler }) as never,
    ),
  );
  t.is(err.message, 'queue notifications carries no rebuildViews jobs: handler(s) left unused');
});
