import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { ACTIVITY_LOCK_SPACE, recordActivities } from '../../db/activities/activity-log';
import { LISTEN_APPLICATION_NAME } from '../../db/activities/activity-listener';
import { decodeId, encodeId } from '../../domain/ids/id-codec';
import { eventBurstJob } from '../../domain/queues/job-registry';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { signToken, settingsFromEnv } from '../../scripts/token';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { TestQueues, eventually, makeEvent } from '../support/queues';
import { create, patch } from '../support/writes';
import { assertForbidden, assertUnauthorized } from '../support/auth';
import { checkedFetch } from '../support/contract';
import { bearer } from '../support/jwks-server';
import { isStream, openSse, type SseError, type SseEvent, type SseStream } from '../support/sse-client';
import { spawnWorkerProcesses } from '../support/worker-processes';

// GET /Changes (DESIGN §16): the activity log as Server-Sent Events, fed by one LISTEN connection
// per API process, resumable, ordered, with bounded buffering per stream.

/** A stream's per-stream buffer limit here: small, so a slow reader is dropped soon after the kernel's buffers fill. */
const MAX_BUFFER_BYTES = 64 * 1024;

let stack: Stack;
let queues: TestQueues;
test.before(async () => {
  stack = await startStack({
    env: {
      METRICS_ENABLED: 'true',
      CHANGES_HEARTBEAT_MS: '300',
      // The safety poll stays out of the way: what arrives, arrives through LISTEN/NOTIFY.
      CHANGES_POLL_MS: '600000',
      CHANGES_MAX_BUFFER_BYTES: String(MAX_BUFFER_BYTES),
      CHANGES_MAX_LISTENERS_PER_SUBJECT: '1000',
    },
  });
  queues = new TestQueues(stack.config);
});
test.after.always(async () => {
  await queues?.close();
  await stack?.close();
});

async function open(t: ExecutionContext, path = '/Changes', headers: Record<string, string> = {}): Promise<SseStream> {
  const answer = await openSse(stack.baseUrl, path, headers);
  if (!isStream(answer)) throw new Error(`GET ${path} answered ${answer.status}: ${answer.text}`);
  t.teardown(() => answer.close());
  // The stream has started once its `retry:` field is in.
  await answer.waitUntil(() => answer.retry !== undefined);
  return answer;
}

/** Ids (database keys) of the activities after `after`, in id order. */
async function activityIdsAfter(after: number): Promise<number[]> {
  const rows = (await stack.knex('activities').where('id', '>', after).orderBy('id').select('id')) as { id: number }[];
  return rows.map((row) => row.id);
}

async function latestId(): Promise<number> {
  const row = (await stack.knex('activities').max({ id: 'id' }).first()) as { id: number | null };
  return row.id ?? 0;
}

const idOf = (event: SseEvent) => decodeId('Activity', event.id ?? '')!;

/** Waits until the activities of `entityIds` are recorded; their database ids in order. */
async function recorded(entityIds: string[], count = entityIds.length): Promise<number[]> {
  return eventually(async () => {
    const rows = (await stack.knex('activities').whereIn('entity_id', entityIds).orderBy('id').select('id')) as {
      id: number;
    }[];
    return rows.length >= count ? rows.map((row) => row.id) : undefined;
  }, 30_000);
}

test.serial(
  'a POST, PATCH and DELETE reach two open streams, each event as GET /Activities/<Id> shows it',
  async (t) => {
    const a = await open(t);
    const b = await open(t);
    t.is(a.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    t.is(a.headers.get('cache-control'), 'no-cache');
    t.is(a.headers.get('x-accel-buffering'), 'no');
    t.is(a.headers.get('content-encoding'), null);
    t.true(a.raw().startsWith('retry: '), 'the retry field comes first');

    const id = await create(stack, 'Schemes', { SchemeName: 'Changes Mill' });
    t.is(
      (await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/SchemeName', value: 'Changes Mill 2' }])).status,
      204,
    );
    t.is((await stack.request('DELETE', `/Schemes/${id}`)).status, 204);

    for (const stream of [a, b]) {
      const events = await stream.waitForEvents(3);
      t.deepEqual(
        events.map((e) => e.event),
        ['SchemeCreated', 'SchemeUpdated', 'SchemeDeleted'],
      );
      for (const event of events) {
        const keyed = await stack.get(`/Activities/${event.id}`);
        t.is(keyed.status, 200);
        t.is(event.data, keyed.text, 'the data is the keyed representation, byte for byte');
        t.is((JSON.parse(event.data) as { EntityId: string }).EntityId, id);
      }
    }
    t.deepEqual(
      a.events.map((e) => e.id),
      b.events.map((e) => e.id),
    );
  },
);

test.serial('resuming with Last-Event-ID or ?since= misses nothing and doubles nothing', async (t) => {
  const first = await open(t);
  const before = await create(stack, 'Schemes', { SchemeName: 'Before The Gap' });
  const [seen] = await first.waitForEvents(1);
  t.is(JSON.parse(seen!.data).EntityId, before);
  first.close();

  // Written while no stream is open.
  const during: string[] = [];
  for (let i = 0; i < 5; i++) during.push(await create(stack, 'Schemes', { SchemeName: `During The Gap ${i}` }));
  const missed = await recorded(during);

  const seenId = idOf(seen!);
  for (const resume of [{ headers: { 'last-event-id': seen!.id! } }, { path: `/Changes?since=${seen!.id}` }]) {
    // What was recorded after the id this client saw (the second round also finds the first's "after").
    const expected = await activityIdsAfter(seenId);
    t.deepEqual(expected.slice(0, missed.length), missed);
    const stream = await open(t, resume.path ?? '/Changes', resume.headers ?? {});
    await stream.waitForEvents(expected.length);
    t.deepEqual(stream.events.map(idOf), expected, 'exactly the entries after the id, in order');
    // Then live, without a seam.
    const after = await create(stack, 'Schemes', { SchemeName: 'After The Gap' });
    const [afterId] = await recorded([after]);
    await stream.waitUntil(() => stream.events.some((e) => idOf(e) === afterId));
    t.deepEqual(stream.events.map(idOf), await activityIdsAfter(seenId));
    stream.close();
  }

  // From the very latest id: only what comes next.
  const latest = await latestId();
  const fromLatest = await open(t, '/Changes', { 'Last-Event-ID': encodeId('Activity', latest) });
  const next = await create(stack, 'Schemes', { SchemeName: 'After The Latest' });
  const [nextId] = await recorded([next]);
  await fromLatest.waitUntil(() => fromLatest.events.some((e) => idOf(e) === nextId));
  t.deepEqual(fromLatest.events.map(idOf), await activityIdsAfter(latest));
});

test.serial('a resume over more history than one page streams all of it, then goes live', async (t) => {
  const start = await latestId();
  // 3 bursts of 200 entries through the real notification worker: several catch-up pages.
  const events = Array.from({ length: 600 }, (_, i) => makeEvent('Scheme', 'Updated', 1_000_000 + i));
  for (let i = 0; i < events.length; i += 200) {
    const job = eventBurstJob(events.slice(i, i + 200));
    await queues.queue(QUEUE.notifications).add(job.name, job.data, job.opts);
  }
  await recorded(
    events.map((e) => e.entityId),
    events.length,
  );
  const ids = await activityIdsAfter(start);
  const stream = await open(t, `/Changes?since=${encodeId('Activity', start)}`);
  await stream.waitForEvents(ids.length, 30_000);
  t.deepEqual(stream.events.map(idOf), ids);
});

test.serial(
  'entries recorded by concurrent notification workers reach the stream exactly once, in id order, and any resume misses nothing',
  async (t) => {
    const live = await open(t);
    const start = await latestId();
    // Two more notification worker processes besides the stack's own.
    const workers = spawnWorkerProcesses(workerProcessEnv(stack, { LOG_LEVEL: 'warn' }), [
      'notifications',
      'notifications',
    ]);
    t.teardown(() => workers.kill());

    // An insert held open in its transaction: its id is drawn now, its commit comes last. Writers
    // of the log commit in id order (the advisory lock), so the ones after it wait for it; without
    // that, theirs would commit first and a feed that moved past them would never see it.
    const held = await stack.knex.transaction();
    t.teardown(() => held.rollback().catch(() => undefined));
    const heldEvent = makeEvent('Scheme', 'Updated', 2_000_000);
    await recordActivities(held, [heldEvent]);
    const heldId = ((await held('activities').where({ event_id: heldEvent.eventId }).first('id')) as { id: number }).id;

    const written: Promise<string>[] = [];
    for (let i = 0; i < 40; i++) written.push(create(stack, 'Schemes', { SchemeName: `Concurrent ${i}` }));
    const ids = await Promise.all(written);
    // Someone waits for the held insert's lock, or (without the lock) a later entry reached the stream.
    await eventually(async () => {
      const waiting = await stack.knex.raw<{ rows: { n: number }[] }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ? and not granted
           and database = (select oid from pg_database where datname = current_database())`,
        [ACTIVITY_LOCK_SPACE],
      );
      return waiting.rows[0]!.n > 0 || live.events.some((e) => idOf(e) > heldId);
    }, 30_000);
    await held.commit();
    await recorded(ids);

    const expected = await activityIdsAfter(start);
    t.true(expected.includes(heldId));
    await live.waitUntil(() => live.events.length >= expected.length, 30_000).catch(() => undefined);
    const got = live.events.map(idOf);
    t.deepEqual(got, expected, 'every entry once, in increasing id order');

    // A client resuming from any id it saw gets exactly the rest.
    for (const from of [got[0]!, got[Math.floor(got.length / 2)]!, got.at(-2)!]) {
      const resumed = await open(t, '/Changes', { 'Last-Event-ID': encodeId('Activity', from) });
      const rest = expected.filter((id) => id > from);
      await resumed.waitForEvents(rest.length);
      t.deepEqual(resumed.events.map(idOf), rest);
      resumed.close();
    }
    await workers.stop();
  },
);

/** The value of a counter or gauge on a stack's /metrics: its samples summed, or the one with `labels`. */
async function metric(name: string, labels = '', on: Stack = stack): Promise<number> {
  const res = await on.get('/metrics');
  return res.text
    .split('\n')
    .filter((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `) || (!labels && l.startsWith(`${name}{`)))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

test.serial(
  'with no stream open, the feed follows the log by its notifications without reading it; a stream opened then starts after them',
  async (t) => {
    // Streams of earlier tests are gone (their close reached this process).
    await eventually(async () => ((await metric('emapi_changes_listeners')) === 0 ? true : undefined), 10_000);
    let feedReads = 0;
    const countFeedReads = (query: { sql: string }) => {
      if (/from activities d where d\.id >/.test(query.sql)) feedReads += 1;
    };
    stack.knex.on('query', countFeedReads);
    t.teardown(() => void stack.knex.off('query', countFeedReads));

    const before = await latestId();
    for (let i = 0; i < 3; i++) await recordActivities(stack.knex, [makeEvent('Scheme', 'Updated', 3_000_000 + i)]);
    const idle = await activityIdsAfter(before);
    t.is(idle.length, 3);
    // Long enough for the notifications to arrive and, before this change, for their reads to run.
    await new Promise((resolve) => setTimeout(resolve, 500));
    t.is(feedReads, 0, 'no page of the log was read for nobody');

    // The position moved with the notifications: a new stream gets what follows, not those three.
    const live = await open(t);
    await recordActivities(stack.knex, [makeEvent('Scheme', 'Updated', 3_000_010)]);
    const [next] = await activityIdsAfter(idle.at(-1)!);
    const [event] = await live.waitForEvents(1);
    t.is(idOf(event!), next!);
    t.true(feedReads > 0, 'with a stream open, the feed reads the log');
  },
);

test.serial('a listener that stops reading is dropped past its buffer limit; another keeps every change', async (t) => {
  const reader = await open(t);
  const droppedBefore = await metric('emapi_changes_listeners_dropped_total', 'reason="behind"');
  // A raw connection that sends its request and never reads.
  const slow = net.connect(Number(new URL(stack.baseUrl).port), '127.0.0.1');
  t.teardown(() => slow.destroy());
  await once(slow, 'connect');
  slow.pause();
  slow.write('GET /Changes HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n');
  await eventually(async () => (await metric('emapi_changes_listeners')) >= 2);
  const start = await latestId();

  // Bursts of entries through the real notification worker until the slow one is dropped: the
  // kernel's socket buffers (a few MB on loopback) fill first, then MAX_BUFFER_BYTES.
  let sent = 0;
  for (let round = 0; round < 300; round++) {
    const events = Array.from({ length: 200 }, (_, i) => makeEvent('Scheme', 'Updated', 3_000_000 + sent + i));
    sent += events.length;
    const job = eventBurstJob(events);
    await queues.queue(QUEUE.notifications).add(job.name, job.data, job.opts);
    if (round % 10 === 9) {
      await eventually(async () => (await latestId()) - start >= sent, 30_000);
      if ((await metric('emapi_changes_listeners_dropped_total', 'reason="behind"')) > droppedBefore) break;
    }
  }
  await eventually(
    async () => (await metric('emapi_changes_listeners_dropped_total', 'reason="behind"')) > droppedBefore,
    30_000,
  );
  t.is(await metric('emapi_changes_listeners'), 1, 'only the reader is left');

  // The dropped stream's last words, once its client reads again.
  let text = '';
  slow.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  const ended = once(slow, 'close');
  slow.resume();
  await ended;
  t.regex(text.slice(-300), /: dropped: this stream fell more than 65536 bytes behind \(CHANGES_MAX_BUFFER_BYTES\)/);

  // The reader has every entry.
  await eventually(async () => (await latestId()) - start >= sent, 30_000);
  const expected = await activityIdsAfter(start);
  await reader.waitUntil(() => reader.events.length >= expected.length, 30_000);
  const got = reader.events.map(idOf).filter((id) => id > start);
  t.deepEqual(got, expected);
});

test.serial('a client that goes away in the middle of a long catch-up frees its place', async (t) => {
  const before = await metric('emapi_changes_listeners');
  t.true((await latestId()) > 2000, 'history of many pages (the slow-listener test wrote it)');
  // Reads the first bytes of a resume from the start of the log, then hangs up.
  const socket = net.connect(Number(new URL(stack.baseUrl).port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  await once(socket, 'connect');
  socket.write(`GET /Changes?since=${encodeId('Activity', 1)} HTTP/1.1\r\nHost: test\r\n\r\n`);
  let text = '';
  await new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\nid: ')) resolve();
    }),
  );
  t.is(await metric('emapi_changes_listeners'), before + 1);
  socket.destroy();
  await eventually(async () => (await metric('emapi_changes_listeners')) === before);
  // The process goes on serving: a new stream still gets the next change.
  const stream = await open(t);
  const id = await create(stack, 'Schemes', { SchemeName: 'After A Hang-Up' });
  await stream.waitUntil(() => stream.events.some((e) => JSON.parse(e.data).EntityId === id));
  t.pass();
});

test.serial('a keep-alive comment comes every CHANGES_HEARTBEAT_MS', async (t) => {
  const stream = await open(t);
  await stream.waitUntil(() => stream.comments.filter((c) => c === 'keep-alive').length >= 2);
  t.true(stream.raw().includes('\n: keep-alive\n\n'));
});

test.serial('the contract check of fetch answers takes an event stream without reading it to its end', async (t) => {
  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const res = await checkedFetch(`${stack.baseUrl}/Changes`, { signal: abort.signal });
  t.is(res.status, 200);
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  t.true(Buffer.from(value!).toString().startsWith('retry: '));
});

test.serial('the LISTEN connection killed: changes committed meanwhile arrive once it is back', async (t) => {
  const stream = await open(t);
  const listenPid = async () => {
    const result = await stack.knex.raw<{ rows: { pid: number }[] }>(
      `select pid from pg_stat_activity where datname = current_database() and application_name = ?`,
      [LISTEN_APPLICATION_NAME],
    );
    return result.rows[0]?.pid;
  };
  // Until an entry is committed while no connection listens (the reconnect waits 100 ms first).
  let meanwhile = false;
  for (let attempt = 0; attempt < 5 && !meanwhile; attempt++) {
    const before = await eventually(listenPid);
    await stack.knex.raw('select pg_terminate_backend(?)', [before]);
    await eventually(async () => (await listenPid()) !== before);
    // The safety poll is 10 minutes away in this file: only the reconnect's catch-up can bring it.
    const event = makeEvent('Scheme', 'Updated', 4_000_000 + attempt);
    await recordActivities(stack.knex, [event]);
    meanwhile = (await listenPid()) === undefined;
    const [id] = await recorded([event.entityId]);
    await stream.waitUntil(() => stream.events.some((e) => idOf(e) === id));
    const after = await eventually(listenPid);
    t.not(after, before, 'a new LISTEN connection');
  }
  t.true(meanwhile, 'an entry was committed while the LISTEN connection was down, and arrived');
});

test.serial('a bad Last-Event-ID or since is a 400 problem naming it', async (t) => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['/Changes', { 'Last-Event-ID': 'not-an-id' }, /^Last-Event-ID: not an Activity Id/],
    ['/Changes?since=abc', {}, /^since: not an Activity Id/],
    ['/Changes?since=a&since=b', {}, /^since: give one Activity Id/],
    ['/Changes?from=x', {}, /only 'since'/],
    ['/Changes', { 'Last-Event-ID': encodeId('Activity', 2_000_000_000) }, /names no activity recorded yet/],
    ['/Changes', { 'Last-Event-ID': 'x'.repeat(8000) }, /^Last-Event-ID: not an Activity Id/],
  ];
  for (const [path, headers, detail] of cases) {
    const answer = (await openSse(stack.baseUrl, path, headers)) as SseError;
    t.is(answer.status, 400, `${path} ${JSON.stringify(headers).slice(0, 60)}`);
    t.is(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    t.regex((answer.body as { detail: string }).detail, detail);
  }
  // A valid header wins over a bad since? No: both are checked.
  const both = (await openSse(stack.baseUrl, '/Changes?since=zz', {
    'Last-Event-ID': encodeId('Activity', 1),
  })) as SseError;
  t.is(both.status, 400);
  const notAcceptable = (await openSse(stack.baseUrl, '/Changes', { accept: 'application/json' })) as SseError;
  t.is(notAcceptable.status, 406);
});

test.serial('any Last-Event-ID or since: never a 5xx, never the value echoed', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.stringMatching(/^[\x21-\x7e]{0,40}$/),
        fc.constantFrom('AAAAAA', 'AAAAAA==', '______', '-', '0', ' '),
      ),
      fc.boolean(),
      async (value, asHeader) => {
        const answer = asHeader
          ? await openSse(stack.baseUrl, '/Changes', { 'Last-Event-ID': value })
          : await openSse(stack.baseUrl, `/Changes?since=${encodeURIComponent(value)}`);
        if (isStream(answer)) {
          answer.close();
          return true;
        }
        if (answer.status !== 400) return false;
        const detail = (answer.body as { detail: string }).detail;
        return value.length < 8 || !detail.includes(value);
      },
    ),
    { numRuns: 150 },
  );
  t.pass();
});

test.serial('a stream ends with a last comment when its server shuts down', async (t) => {
  const own = await startStack({ workers: [] });
  let closed = false;
  t.teardown(() => (closed ? undefined : own.close()));
  const answer = await openSse(own.baseUrl, '/Changes');
  if (!isStream(answer)) throw new Error(answer.text);
  await answer.waitUntil(() => answer.retry !== undefined);
  await own.close();
  closed = true;
  await answer.waitUntil(() => answer.ended);
  t.true(answer.comments.some((c) => c.startsWith('the server is shutting down')));
});

test('a client that takes no byte for CHANGES_STALL_MS while bytes wait is let go', async (t) => {
  // No byte limit to speak of here: only the stall guard can let this client go.
  const env = { METRICS_ENABLED: 'true', CHANGES_STALL_MS: '300', CHANGES_MAX_BUFFER_BYTES: String(2 ** 30) };
  const own = await startStack({ workers: [], env });
  t.teardown(() => own.close());
  await recordActivities(own.knex, [makeEvent('Scheme', 'Updated', 5_000_000)]);
  const socket = net.connect(Number(new URL(own.baseUrl).port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  await once(socket, 'connect');
  socket.pause();
  socket.write(`GET /Changes?since=${encodeId('Activity', 1)} HTTP/1.1\r\nHost: test\r\n\r\n`);
  await eventually(async () => (await metric('emapi_changes_listeners', '', own)) === 1);
  // Entries recorded as the notification worker records them, 4,000 at a time, until the kernel's
  // socket buffers (a few MB on loopback) are full and bytes wait for a client that takes none.
  const stalled = () =>
    eventually(async () => (await metric('emapi_changes_listeners_dropped_total', 'reason="stalled"', own)) === 1, 2000)
      .then(() => true)
      .catch(() => false);
  let dropped = false;
  for (let round = 0; round < 15 && !dropped; round++) {
    for (let i = 0; i < 20; i++) {
      const base = 5_000_000 + (round * 20 + i + 1) * 200;
      await recordActivities(
        own.knex,
        Array.from({ length: 200 }, (_, j) => makeEvent('Scheme', 'Updated', base + j)),
      );
    }
    dropped = await stalled();
  }
  t.true(dropped, 'dropped as stalled');
  t.is(await metric('emapi_changes_listeners', '', own), 0);
  const closed = once(socket, 'close');
  socket.resume();
  await closed;
});

test('listener limits: per caller 429, per process 503; no token 401, no role 403', async (t) => {
  const env = {
    AUTH_SECRET: 'a-local-secret-of-more-than-32-bytes!',
    AUTH_ISSUER: 'http://localhost/',
    AUTH_AUDIENCE: 'emapi-local',
    CHANGES_MAX_LISTENERS: '3',
    CHANGES_MAX_LISTENERS_PER_SUBJECT: '2',
  };
  const own = await startStack({ workers: [], env });
  t.teardown(() => own.close());
  const settings = settingsFromEnv(env);
  const token = (subject: string, roles: string[]) => bearer(signToken({ roles, subject, ttlSeconds: 300 }, settings));
  const streams: SseStream[] = [];
  t.teardown(() => streams.forEach((s) => s.close()));
  const openAs = async (subject: string) => {
    const answer = await openSse(own.baseUrl, '/Changes', token(subject, ['User']));
    if (isStream(answer)) streams.push(answer);
    return answer;
  };
  t.true(isStream(await openAs('sam')));
  t.true(isStream(await openAs('sam')));
  const third = (await openAs('sam')) as SseError;
  t.is(third.status, 429);
  t.is(third.headers.get('retry-after'), '5');
  t.regex((third.body as { detail: string }).detail, /CHANGES_MAX_LISTENERS_PER_SUBJECT/);
  t.true(isStream(await openAs('alex')));
  const full = (await openAs('bob')) as SseError;
  t.is(full.status, 503);
  t.is(full.headers.get('retry-after'), '5');
  t.regex((full.body as { detail: string }).detail, /CHANGES_MAX_LISTENERS/);
  // A closed stream frees its place.
  streams.pop()!.close();
  const again = await eventually(async () => {
    const answer = await openAs('bob');
    return isStream(answer) ? answer : undefined;
  });
  t.is(again.status, 200);

  assertUnauthorized(t, await own.get('/Changes'));
  assertForbidden(t, await own.get('/Changes', token('nobody', [])));
});

test.serial('the API process on SIGTERM ends its open streams, logs them, and exits 0', async (t) => {
  const child = spawn(process.execPath, [path.resolve(__dirname, '../../api/main.js')], {
    env: workerProcessEnv(stack, { AUTH_MOCK: 'true', PORT: '0', LOG_LEVEL: 'info', NODE_ENV: 'development' }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => child.exitCode === null && child.kill('SIGKILL'));
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = once(child, 'exit');
  const port = await eventually(async () => {
    const line = stdout.split('\n').find((l) => l.includes('API listening'));
    return line ? (JSON.parse(line) as { port: number }).port : undefined;
  }, 30_000);
  const answer = await openSse(`http://127.0.0.1:${port}`, '/Changes');
  if (!isStream(answer)) throw new Error(answer.text);
  await answer.waitUntil(() => answer.retry !== undefined);
  child.kill('SIGTERM');
  const [code] = (await exited) as [number];
  t.is(code, 0, 'stopped within its grace period, not held open by the stream');
  await answer.waitUntil(() => answer.ended);
  t.true(answer.comments.some((c) => c.startsWith('the server is shutting down')));
  const logged = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { url?: string; msg: string; status?: number })
    .find((entry) => entry.url === '/Changes');
  t.like(logged, { msg: 'request completed', status: 200 });
});
