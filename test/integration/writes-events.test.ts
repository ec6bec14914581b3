import { randomUUID } from 'node:crypto';
import test from 'ava';
import type { Queue } from 'bullmq';
import { testQueue } from '../support/queues';
import type { DomainEvent } from '../../domain/events/domain-event';
import { EVENT_BURST_JOB, QUEUE } from '../../domain/queues/queue-contracts';
import type { EventBurstData } from '../../domain/queues/job-registry';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { create, patch, waitFor } from '../support/writes';

/**
 * Every successful write commits one domain event to the outbox, which the relay publishes to the
 * `views` and `notifications` queues (one burst job per publish and queue) and marks sent.
 * Only the command worker runs here, so the published jobs stay in their queues to be looked at.
 */

let stack: Stack;
let queues: Queue[];
test.before(async () => {
  stack = await startStack({ workers: [(config) => startCommandWorker(config, { outboxSweepIntervalMs: 100 })] });
  queues = [QUEUE.views, QUEUE.notifications].map((name) => testQueue(stack.config, name));
});
test.after.always(async () => {
  await Promise.allSettled(queues.map((q) => q.close()));
  await stack?.close();
});

async function eventsOf(entityId: string): Promise<DomainEvent[]> {
  const rows = (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [entityId]).orderBy('id')) as {
    event: DomainEvent;
  }[];
  return rows.map((r) => r.event);
}

/** Waits until the event is marked published and is a job on both event queues. */
async function assertPublished(t: import('ava').ExecutionContext, event: DomainEvent) {
  await waitFor(async () => {
    const row = (await stack.knex('outbox').where({ event_id: event.eventId }).first()) as {
      published_at: Date | null;
    };
    return row.published_at !== null;
  });
  for (const queue of queues) {
    const jobs = await queue.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed']);
    const bursts = jobs.filter((job) => (job.data as EventBurstData).events?.some((e) => e.eventId === event.eventId));
    // The sweep here runs every 100 ms, as often as marks are written: it may publish an event
    // its process already published, in another burst (the consumers are idempotent per event).
    t.true(bursts.length >= 1, `${queue.name} has ${event.name} in a burst`);
    for (const burst of bursts) {
      t.is(burst.name, EVENT_BURST_JOB);
      t.deepEqual(
        (burst.data as EventBurstData).events.find((e) => e.eventId === event.eventId),
        event,
      );
    }
  }
}

test('create, patch and delete each publish one event with changed fields and version', async (t) => {
  const address = await create(stack, 'Addresses', { AddressLine: 'Evented Street' });
  const id = await create(stack, 'Schemes', {
    SchemeName: 'Evented',
    TotalUnits: 3,
    Address: { Id: address },
    Notes: [{ Text: 'hello' }],
  });
  t.is(
    (
      await patch(stack, `/Schemes/${id}`, [
        { op: 'replace', path: '/SchemeName', value: 'Renamed' },
        { op: 'add', path: '/Tags/-', value: { Name: 'new' } },
      ])
    ).status,
    204,
  );
  t.is((await stack.request('DELETE', `/Schemes/${id}`)).status, 204);

  const events = await eventsOf(id);
  t.deepEqual(
    events.map((e) => [e.name, e.changedFields, e.version]),
    [
      ['SchemeCreated', ['SchemeName', 'TotalUnits', 'Address', 'Notes'], 1],
      ['SchemeUpdated', ['SchemeName', 'Tags'], 2],
      ['SchemeDeleted', [], 0],
    ],
  );
  const addressKey = ((await stack.knex('addresses').where({ encoded_id: address }).first('id')) as { id: number }).id;
  for (const event of events) {
    t.like(event, { entityType: 'Scheme', entityId: id, subject: 'mock-user' });
    t.like(event.references, { Address: addressKey, Market: null });
    t.regex(event.commandId, /^[0-9a-f-]{36}$/);
    await assertPublished(t, event);
  }
});

test('a write that changes nothing still records one event, with no changed fields', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Steady' });
  t.is((await stack.request('PUT', `/Companies/${id}`, { body: { Name: 'Steady' } })).status, 204);
  const events = await eventsOf(id);
  t.deepEqual(
    events.map((e) => [e.name, e.changedFields, e.version]),
    [
      ['CompanyCreated', ['Name'], 1],
      ['CompanyUpdated', [], 1],
    ],
  );
});

test('failed writes publish nothing', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Unchanged' });
  t.is((await patch(stack, `/Companies/${id}`, [{ op: 'test', path: '/Name', value: 'Other' }])).status, 409);
  t.is((await stack.request('PUT', `/Companies/${id}`, { body: {} })).status, 400);
  t.deepEqual(
    (await eventsOf(id)).map((e) => e.name),
    ['CompanyCreated'],
  );
});

/** A committed event written straight into the outbox, as if its process died before publishing. */
async function leftUnpublished(entityId: string, dbId: number, version: number): Promise<DomainEvent> {
  const event: DomainEvent = {
    eventId: randomUUID(),
    name: 'CompanyUpdated',
    entityType: 'Company',
    entityId,
    dbId,
    changedFields: ['Name'],
    subject: 'tester',
    commandId: randomUUID(),
    occurredAt: new Date().toISOString(),
    version,
    references: { Country: null },
  };
  await stack.knex('outbox').insert({ event_id: event.eventId, event: JSON.stringify(event) });
  return event;
}

test('events left unpublished by a crash are published by the sweep', async (t) => {
  await assertPublished(t, await leftUnpublished('AAAAAA', 1, 2));
});

test('a row that is not an event is set aside by the sweep and does not hold back the rows after it', async (t) => {
  const [bad] = (await stack
    .knex('outbox')
    .insert({ event_id: randomUUID(), event: JSON.stringify({ not: 'an event' }) })
    .returning('id')) as { id: number }[];
  await assertPublished(t, await leftUnpublished('AAAAAB', 2, 3));
  const row = (await stack.knex('outbox').where({ id: bad!.id }).first()) as { published_at: Date | null };
  t.not(row.published_at, null, 'marked, so the sweep does not pick it up again');
});
