import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { ACTIVITY_LOCK_SPACE, recordActivities } from '../../db/activities/activity-log';
import type { DomainEvent } from '../../domain/events/domain-event';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { eventBurstJob } from '../../domain/queues/job-registry';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startNotificationsWorker } from '../../workers/notifications/notifications-worker';
import { startViewsWorker } from '../../workers/views/views-worker';
import { TestQueues, eventually, makeEvent } from '../support/queues';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { create, patch } from '../support/writes';

/**
 * Events travel as bursts (one job per burst per consumer queue, DESIGN §9) and the consumers apply
 * a burst set-based, idempotent per event id: a burst delivered twice, one that partly applied
 * before, one whose worker was killed in the middle all leave one activity per event; and the
 * search read model only moves forward, whatever order bursts are handled in.
 *
 * Only the command worker runs in-process throughout; each test starts the event workers it needs.
 */

const RECOVERY = { WORKER_LOCK_DURATION_MS: '3000', WORKER_STALLED_INTERVAL_MS: '500' };
const NOTIFICATIONS_MAIN = path.resolve(__dirname, '../../workers/notifications/main.js');

let stack: Stack;
let queues: TestQueues;
test.before(async () => {
  // Every worker of a queue takes part in the stalled check, at the shortest interval any of them
  // has set: all of them recover a dead worker's job within a few seconds here.
  stack = await startStack({ env: RECOVERY, workers: [(config) => startCommandWorker(config)] });
  queues = new TestQueues(stack.config);
});
test.after.always(async () => {
  await queues?.close();
  await stack?.close();
});

async function activityCounts(events: readonly DomainEvent[]): Promise<number[]> {
  const rows = (await stack
    .knex('activities')
    .whereIn(
      'event_id',
      events.map((e) => e.eventId),
    )
    .select('event_id')) as { event_id: string }[];
  return events.map((e) => rows.filter((r) => r.event_id === e.eventId).length);
}

async function someEvents(n: number, label: string): Promise<DomainEvent[]> {
  const keys = (await stack
    .knex('companies')
    .insert(Array.from({ length: n }, (_, i) => ({ name: `${label} ${i}` })))
    .returning('id')) as { id: number }[];
  return keys.map(({ id }) => makeEvent('Company', 'Updated', id, { changedFields: ['Name'] }));
}

test.serial('a burst delivered twice, or after part of it applied, records each event once, in order', async (t) => {
  const worker = await startNotificationsWorker(stack.config);
  t.teardown(() => worker.close());
  const events = await someEvents(50, 'Burst Twice');
  const to = [QUEUE.notifications];
  await queues.publishBurst(events.slice(0, 20), {}, to); // a first delivery that got part of the way
  await queues.publishBurst(events, {}, to);
  await queues.publishBurst(events, { jobId: 'the-same-burst-again' }, to);
  t.deepEqual(await activityCounts(events), Array(50).fill(1));
  const order = (await stack
    .knex('activities')
    .whereIn(
      'event_id',
      events.map((e) => e.eventId),
    )
    .orderBy('id')
    .select('event_id')) as { event_id: string }[];
  t.deepEqual(
    order.map((r) => r.event_id),
    events.map((e) => e.eventId),
    'entries keep the burst order',
  );
});

/** Event types of an entity's activity-log entries, in the log's (Id) order. */
async function loggedTypes(entityId: string): Promise<string[]> {
  const rows = (await stack.knex('activities').where('entity_id', entityId).orderBy('id').select('event_type')) as {
    event_type: string;
  }[];
  return rows.map((row) => row.event_type);
}

test.serial("an entity's events taken in reverse order are logged in the order its writes committed", async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Reverse Mill' });
  for (const name of ['Reverse Mill 2', 'Reverse Mill 3']) {
    t.is((await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/SchemeName', value: name }])).status, 204);
  }
  t.is((await stack.request('DELETE', `/Schemes/${id}`)).status, 204);
  // Once published, the bursts on the notification queue are replaced by one burst per event, the
  // last write's first: as jobs taken at once by several workers may be, or a late publish.
  const outbox = () =>
    stack
      .knex('outbox')
      .whereRaw(`event->>'entityId' = ?`, [id])
      .orderBy('id')
      .select('event', 'published_at') as Promise<{ event: DomainEvent; published_at: Date | null }[]>;
  const rows = await eventually(async () => {
    const found = await outbox();
    return found.length === 4 && found.every((row) => row.published_at) ? found : undefined;
  });
  await queues.queue(QUEUE.notifications).obliterate({ force: true });
  for (const { event } of [...rows].reverse()) {
    const job = eventBurstJob([event]);
    await queues.queue(QUEUE.notifications).add(job.name, job.data, job.opts);
  }
  const worker = await startNotificationsWorker(stack.config);
  t.teardown(() => worker.close());
  await eventually(async () => (await loggedTypes(id)).length === 4 || undefined, 20_000);
  t.deepEqual(await loggedTypes(id), ['SchemeCreated', 'SchemeUpdated', 'SchemeUpdated', 'SchemeDeleted']);
});

test.serial(
  'property: events recorded in any order and any bursts give each entity its entries in outbox order, once each',
  async (t) => {
    let base = 7_000_000;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
        fc.infiniteStream(fc.nat()),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }),
        async (perEntity, shuffle, burstSizes) => {
          base += 10;
          // Each entity's events written to the outbox in its write order (marked published, so
          // the sweep leaves them alone), the entities interleaved.
          const histories = perEntity.map((n, e) =>
            Array.from({ length: n }, (_, i) =>
              makeEvent('Company', i === 0 ? 'Created' : 'Updated', base + e, { version: i + 1 }),
            ),
          );
          const written = histories
            .flatMap((history) => history.map((event, i) => ({ event, i })))
            .sort((a, b) => a.i - b.i);
          for (const { event } of written) {
            await stack.knex('outbox').insert({ event_id: event.eventId, event, published_at: stack.knex.fn.now() });
          }
          // Delivered in a random order, in bursts of random sizes.
          const order = written.map(({ event }) => event);
          const picks = shuffle.take(order.length);
          for (let i = order.length - 1; i > 0; i--) {
            const j = picks.next().value! % (i + 1);
            [order[i], order[j]] = [order[j]!, order[i]!];
          }
          for (let at = 0, b = 0; at < order.length; b++) {
            const size = burstSizes[b % burstSizes.length]!;
            await recordActivities(stack.knex, order.slice(at, at + size));
            at += size;
          }
          for (const history of histories) {
            const logged = (await stack
              .knex('activities')
              .where('entity_id', history[0]!.entityId)
              .orderBy('id')
              .select('event_id')) as { event_id: string }[];
            t.deepEqual(
              logged.map((row) => row.event_id),
              history.map((event) => event.eventId),
            );
          }
        },
      ),
      { numRuns: 40 },
    );
  },
);

test.serial(
  "a malformed earlier outbox row: its entity's later events are recorded alone, other entities keep their order",
  async (t) => {
    const notifications = await startNotificationsWorker(stack.config);
    t.teardown(() => notifications.close());
    // Three entities, each with a recorded first event; Z and Y then have a malformed event (a date
    // Postgres refuses, 22007) and a good one; X two good ones. Written to the outbox in that order.
    const history = (key: number, malformed: boolean) => [
      makeEvent('Company', 'Created', key),
      makeEvent('Company', 'Updated', key, malformed ? { occurredAt: 'not a date' } : {}),
      makeEvent('Company', 'Updated', key),
    ];
    const [z, y, x] = [history(8_100_001, true), history(8_100_002, true), history(8_100_003, false)];
    for (const event of [z, y, x].flat()) {
      await stack.knex('outbox').insert({ event_id: event.eventId, event, published_at: stack.knex.fn.now() });
    }
    await recordActivities(stack.knex, [z[0]!, y[0]!, x[0]!]);
    const logged = async (events: DomainEvent[]) =>
      (
        (await stack.knex('activities').where('entity_id', events[0]!.entityId).orderBy('id').select('event_id')) as {
          event_id: string;
        }[]
      ).map((row) => row.event_id);

    // A single-event job whose walk meets the malformed row still records its event.
    await queues.deliverSingle(QUEUE.notifications, z[2]!);
    t.deepEqual(await logged(z), [z[0]!.eventId, z[2]!.eventId]);

    // A burst whose Y event meets the malformed row: X's event is still recorded after X's earlier one.
    await queues.publishBurst([y[2]!, x[2]!], {}, [QUEUE.notifications]);
    t.deepEqual(
      await logged(x),
      x.map((event) => event.eventId),
    );
    t.deepEqual(await logged(y), [y[0]!.eventId, y[2]!.eventId]);
    // The malformed event itself fails its job without retry, naming it; nothing else changes.
    const err = await t.throwsAsync(queues.publishBurst([y[1]!, x[1]!], {}, [QUEUE.notifications]));
    t.regex(err.message, new RegExp(`1 of 2 events could not be applied for their data \\(${y[1]!.eventId}\\)`));
    t.deepEqual(
      await logged(x),
      x.map((event) => event.eventId),
    );
  },
);

function notificationsProcess(): { child: ChildProcess; exited: Promise<unknown> } {
  const child = spawn(process.execPath, [NOTIFICATIONS_MAIN], {
    env: workerProcessEnv(stack, { LOG_LEVEL: 'warn', ...RECOVERY }),
    stdio: 'ignore',
  });
  return { child, exited: new Promise((resolve) => child.once('exit', resolve)) };
}

test.serial(
  'a notification worker killed in the middle of a burst: after recovery each event is recorded once',
  async (t) => {
    const events = await someEvents(200, 'Killed Mid Burst');
    // Hold inserts into the activity log so the worker is caught inside the burst's statement.
    const blocker = await stack.knex.transaction();
    t.teardown(() => blocker.rollback().catch(() => undefined));
    await blocker.raw('lock table activities in share mode');
    const doomed = notificationsProcess();
    t.teardown(() => void doomed.child.kill('SIGKILL'));
    const job = eventBurstJob(events);
    await queues.queue(QUEUE.notifications).add(job.name, job.data, job.opts);
    await eventually(async () => {
      const waiting = await stack.knex.raw<{ rows: { n: number }[] }>(
        `select count(*)::int as n from pg_locks where relation = 'activities'::regclass and not granted`,
      );
      return waiting.rows[0]!.n > 0;
    }, 20_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await blocker.rollback();

    // Another worker finds the dead one's job stalled and runs the burst again.
    const recovering = await startNotificationsWorker(stack.config);
    t.teardown(() => recovering.close());
    await eventually(
      async () => (await queues.queue(QUEUE.notifications).getJobState(job.opts.jobId!)) === 'completed',
      20_000,
    );
    t.deepEqual(await activityCounts(events), Array(200).fill(1));
  },
);

async function searchNames(query: string): Promise<string[]> {
  const res = await stack.get(`/Companies?$search=${encodeURIComponent(query)}`);
  return (res.body as { Name: string }[]).map((d) => d.Name);
}

test.serial('an earlier event handled after a later one leaves the later document in search', async (t) => {
  const views = await startViewsWorker(stack.config);
  t.teardown(() => views.close());
  const id = await create(stack, 'Companies', { Name: 'Ordering Alpha' });
  const [created] = (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [id]).select('event')) as {
    event: DomainEvent;
  }[];
  t.is(
    (await patch(stack, `/Companies/${id}`, [{ op: 'replace', path: '/Name', value: 'Ordering Omega' }])).status,
    204,
  );
  await eventually(async () => (await searchNames('omega')).includes('Ordering Omega'));
  // The creation's burst comes again, late (a retry, the sweep): the document stays the later one.
  await queues.publishBurst([created!.event], { jobId: 'late-creation-burst' }, [QUEUE.views]);
  t.deepEqual(await searchNames('ordering'), ['Ordering Omega']);
  t.deepEqual(await searchNames('alpha'), []);
});

async function companyNameDocument(key: number): Promise<string | undefined> {
  const row = (await stack
    .knex('search_fields')
    .where({ entity_type: 'Company', entity_key: key, field: 'Name' })
    .first('document')) as { document: string } | undefined;
  return row?.document;
}

async function lockWaits(locktype: string): Promise<number> {
  const waiting = await stack.knex.raw<{ rows: { n: number }[] }>(
    // Waits of this file's database only (pg_locks shows every database of the server, and a
    // transactionid lock names none), and not the activity log's lock (db/activities/activity-log.ts),
    // which this file's own notification worker may wait for.
    `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where a.datname = current_database() and l.locktype = ? and not l.granted
        and not (l.locktype = 'advisory' and l.classid = ?)`,
    [locktype, ACTIVITY_LOCK_SPACE],
  );
  return waiting.rows[0]!.n;
}

test.serial('a rebuild that read a row before a later change never commits over the later document', async (t) => {
  const views = await startViewsWorker(stack.config); // WORKER_CONCURRENCY bursts at once
  t.teardown(() => views.close());
  const [holder, target] = (await stack
    .knex('companies')
    .insert([{ name: 'Holder Row' }, { name: 'Stale Alpha' }])
    .returning('id')) as { id: number }[];
  const initial = [holder!.id, target!.id].map((id) =>
    makeEvent('Company', 'Created', id, { changedFields: ['Name'] }),
  );
  await queues.publishBurst(initial, {}, [QUEUE.views]);
  t.regex((await companyNameDocument(target!.id))!, /alpha/);

  // Burst A reads the target as 'Stale Alpha', then waits on the holder's document row (locked here).
  const blocker = await stack.knex.transaction();
  t.teardown(() => blocker.rollback().catch(() => undefined));
  await blocker('search_fields').where({ entity_type: 'Company', entity_key: holder!.id }).forUpdate().select('field');
  const burstA = eventBurstJob(
    [holder!.id, target!.id].map((id) => makeEvent('Company', 'Updated', id, { changedFields: ['Name'] })),
  );
  await queues.queue(QUEUE.views).add(burstA.name, burstA.data, burstA.opts);
  await eventually(async () => (await lockWaits('transactionid')) > 0, 10_000);

  // The row changes and burst B, for the target alone, comes while A is still in its statement.
  await stack.knex('companies').where({ id: target!.id }).update({ name: 'Fresh Omega', version: 2 });
  const burstB = eventBurstJob([makeEvent('Company', 'Updated', target!.id, { changedFields: ['Name'], version: 2 })]);
  await queues.queue(QUEUE.views).add(burstB.name, burstB.data, burstB.opts);
  // B either finished (two rebuilds overlapping) or waits for A's (one rebuild of Company at a time).
  await eventually(
    async () =>
      (await queues.queue(QUEUE.views).getJobState(burstB.opts.jobId!)) === 'completed' ||
      (await lockWaits('advisory')) > 0,
    10_000,
  );
  await blocker.rollback();
  for (const job of [burstA, burstB]) {
    await eventually(async () => (await queues.queue(QUEUE.views).getJobState(job.opts.jobId!)) === 'completed');
  }
  const document = (await companyNameDocument(target!.id))!;
  t.regex(document, /omega/, 'the later document stays');
  t.notRegex(document, /alpha/);
});

test.serial('an update rebuilds only the documents that show a member it changed', async (t) => {
  const views = await startViewsWorker(stack.config);
  t.teardown(() => views.close());
  const company = await create(stack, 'Companies', { Name: 'Shown Everywhere' });
  await create(stack, 'Schemes', {
    SchemeName: 'Shows A Company',
    Companies: [{ Company: { Id: company }, Role: 'Developer' }],
  });
  const { event } = (await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [company]).first('event')) as {
    event: DomainEvent;
  };
  const rebuilt = async (changedFields: string[]) => {
    const job = eventBurstJob([makeEvent('Company', 'Updated', event.dbId, { changedFields })]);
    const result = (await queues.run(QUEUE.views, job.name, job.data, job.opts)) as { documents: number };
    return result.documents;
  };
  t.is(await rebuilt(['Name']), 2, 'its own document and the scheme that shows its name');
  t.is(await rebuilt(['RegistrationNumber']), 1, 'only its own document: no scheme shows it');
  t.is(await rebuilt(['Country']), 0, 'no document shows its country');
  t.is(await rebuilt([]), 0, 'a write that changed nothing');
});

test.serial(
  'a malformed event fails alone: the rest of its burst is applied, the job fails without retry naming it',
  async (t) => {
    const notifications = await startNotificationsWorker(stack.config);
    t.teardown(() => notifications.close());
    const views = await startViewsWorker(stack.config);
    t.teardown(() => views.close());
    const good = await someEvents(3, 'Beside A Malformed Event');
    const cases = [
      // No entity Id: the activity log's NOT NULL refuses it (23502).
      [QUEUE.notifications, { ...makeEvent('Company', 'Updated', 1), entityId: null as unknown as string }],
      // A key that is no key: the search rebuild's integer array refuses it (22P02).
      [
        QUEUE.views,
        { ...makeEvent('Company', 'Updated', 1, { changedFields: ['Name'] }), dbId: 'no-key' as unknown as number },
      ],
    ] as const;
    for (const [queue, bad] of cases) {
      const job = eventBurstJob([good[0]!, bad, ...good.slice(1)]);
      const err = await t.throwsAsync(queues.run(queue, job.name, job.data, job.opts));
      t.regex(err.message, new RegExp(`1 of 4 events could not be applied for their data \\(${bad.eventId}\\)`), queue);
      const failed = (await queues.queue(queue).getJob(job.opts.jobId!))!;
      t.is(failed.attemptsMade, 1, `${queue}: not retried`);
    }
    t.deepEqual(await activityCounts(good), [1, 1, 1], 'the good events have their activities');
    const indexed = (await stack
      .knex('search_fields')
      .whereIn(
        'entity_key',
        good.map((e) => e.dbId),
      )
      .where({ entity_type: 'Company', field: 'Name' })
      .count('* as n')) as { n: number }[];
    t.is(Number(indexed[0]!.n), 3, 'and their search documents');
  },
);
