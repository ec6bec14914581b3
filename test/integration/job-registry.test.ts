import test from 'ava';
import type { Job } from 'bullmq';
import type { DomainEvent } from '../../domain/events/domain-event';
import { JOBS, eventBurstJob } from '../../domain/queues/job-registry';
import { EVENT_BURST_JOB, QUEUE } from '../../domain/queues/queue-contracts';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startNotificationsWorker } from '../../workers/notifications/notifications-worker';
import { TestQueues, eventually } from '../support/queues';
import { startStack, type Stack } from '../support/stack';
import { create } from '../support/writes';

/**
 * The job registry over real queues: every producer adds its jobs with the registry's options and
 * id rule (the only retention a finished job gets), each queue's one processor routes a job by its
 * name and fails one no producer sends, and EVENT_PUBLISH_WINDOW_MS=0 publishes right after each
 * command. No view worker runs, so the `views` jobs stay to be looked at.
 */

let stack: Stack;
let queues: TestQueues;
test.before(async () => {
  stack = await startStack({
    env: { EVENT_PUBLISH_WINDOW_MS: '0' },
    workers: [
      // The sweep only takes rows older than its interval: with an hour, only the publisher publishes here.
      (config) => startCommandWorker(config, { outboxSweepIntervalMs: 3_600_000 }),
      startNotificationsWorker,
    ],
  });
  queues = new TestQueues(stack.config);
});
test.after.always(async () => {
  await queues?.close();
  await stack?.close();
});

async function eventOf(entityId: string): Promise<DomainEvent & { publishedAt: Date | null }> {
  const row = (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [entityId]).first()) as {
    event: DomainEvent;
    published_at: Date | null;
  };
  return { ...row.event, publishedAt: row.published_at };
}

test('with EVENT_PUBLISH_WINDOW_MS=0 a command is published and marked by its own process, not the sweep', async (t) => {
  t.is(stack.config.eventPublishWindowMs, 0);
  const id = await create(stack, 'Companies', { Name: 'Published At Once' });
  const event = await eventually(async () => {
    const found = await eventOf(id);
    return found.publishedAt ? found : undefined;
  });
  t.is(event.name, 'CompanyCreated');
  t.truthy(await queues.burstOf(QUEUE.views, event.eventId), 'its burst is on the views queue');
  // Handled through the notifications queue's one processor: the event's activity is there.
  await eventually(async () => (await stack.knex('activities').where({ event_id: event.eventId }).first()) as unknown);
  t.pass();
});

test('commands, events and rebuilds are queued with their registry options and job ids', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Registered Options' });
  const event = await eventually(async () => {
    const found = await eventOf(id);
    return found.publishedAt ? found : undefined;
  });

  const command = (await queues.queue(QUEUE.commands).getJob(event.commandId)) as Job;
  t.is(command.name, 'create');
  t.like(command.opts, JOBS.command.options);

  for (const queue of JOBS.eventBurst.queues) {
    const job = (await queues.burstOf(queue, event.eventId))!;
    t.is(job.name, EVENT_BURST_JOB, queue);
    t.like(job.opts, JOBS.eventBurst.options, queue);
    t.is(job.id, eventBurstJob(job.data.events).opts.jobId, 'the id is the digest of its events');
  }

  const started = await stack.request('POST', '/Jobs/RebuildViews');
  t.is(started.status, 202, started.text);
  const rebuild = (await queues.queue(QUEUE.views).getJob((started.body as { Id: string }).Id)) as Job;
  t.like(rebuild.opts, JOBS.rebuildViews.options);
  await rebuild.remove(); // no view worker here; left waiting it would only sit in the queue
});

test('a job name no producer sends fails loudly on its queue rather than being dropped', async (t) => {
  const err = await t.throwsAsync(queues.run(QUEUE.notifications, 'NoSuchEvent', { eventId: 'x' }));
  t.regex(err.message, /no handler for job NoSuchEvent on queue notifications/);
});
