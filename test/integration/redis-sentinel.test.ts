import test from 'ava';
import { execFile } from 'node:child_process';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { encodeId } from '../../domain/ids/id-codec';
import { checkQueuesListed, eventually } from '../support/queues';
import { startRedisSentinel, type RedisSentinel } from '../support/redis-sentinel';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { spawnWorkerProcesses } from '../support/worker-processes';
import { create, patch, read, type Problem } from '../support/writes';

/**
 * The service on Redis behind Sentinel (DESIGN §14, REDIS_SENTINELS + REDIS_SENTINEL_NAME): a
 * primary, a replica and three sentinels started by this file. The API, the workers, /Jobs and
 * Bull Board find the primary through the sentinels; when it is killed, writes answer 503 while
 * the sentinels fail over and go on, on the promoted replica, without a restart of the service.
 */

const COMMAND_TIMEOUT_MS = 3000;

let sentinel: RedisSentinel;
let stack: Stack;

test.before(async () => {
  sentinel = await startRedisSentinel();
  stack = await startStack({
    env: {
      REDIS_SENTINELS: sentinel.sentinels,
      REDIS_SENTINEL_NAME: sentinel.name,
      COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      METRICS_ENABLED: 'true',
    },
  });
});

test.after.always(async () => {
  await stack?.close();
  await sentinel?.stop();
});

test.serial('writes are answered through the primary the sentinels name', async (t) => {
  t.deepEqual(stack.config.redis, {
    sentinels: sentinel.sentinels.split(',').map((item) => ({ host: '127.0.0.1', port: Number(item.split(':')[1]) })),
    sentinelName: sentinel.name,
  });
  const env = workerProcessEnv(stack);
  t.is(env.REDIS_SENTINELS, sentinel.sentinels, 'worker processes get the sentinels');
  t.is(env.REDIS_SENTINEL_NAME, sentinel.name);
  t.is(env.REDIS_URL, undefined);
  const id = await create(stack, 'Companies', { Name: 'Watched Holdings' });
  const patched = await patch(stack, `/Companies/${id}`, [{ op: 'replace', path: '/Name', value: 'Watched Group' }]);
  t.is(patched.status, 204, patched.text);
  t.is((await read<{ Name: string }>(stack, `/Companies/${id}`)).Name, 'Watched Group');
  // The queues' keys are on the primary, under the unchanged QUEUE_PREFIX.
  const primary = await sentinel.primaryPort();
  const keys = await new Promise<string>((resolve, reject) =>
    execFile(
      'redis-cli',
      ['-p', String(primary), '--scan', '--pattern', `${stack.config.queuePrefix}:${QUEUE.commands}:*`],
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  );
  t.true(keys.trim().length > 0, 'the commands queue lives on the primary');
});

test.serial('events reach /Activities; /Jobs and Bull Board list the queues', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Sentinelled Quarry' });
  const activities = await eventually(async () => {
    const res = await stack.get(`/Activities?$filter=${encodeURIComponent(`EntityId eq '${id}'`)}`);
    const rows = res.body as { EventType: string }[];
    return rows.length ? rows : undefined;
  }, 30_000);
  t.deepEqual(
    activities.map((a) => a.EventType),
    ['CompanyCreated'],
  );
  await checkQueuesListed(t, stack);
  const metrics = await stack.get('/metrics');
  t.is(metrics.status, 200, metrics.text);
  const completed = new RegExp(`^emapi_queue_jobs\\{queue="${QUEUE.commands}",state="completed"\\} ([1-9]\\d*)$`, 'm');
  t.regex(metrics.text, completed, 'the queue gauges read the primary');
});

interface Answer {
  marker: string;
  status: number;
  problem?: Problem;
}

/**
 * One POST /Companies with a marker of its own in the name. A request that never answers fails
 * the test: the API must answer within COMMAND_TIMEOUT_MS (202 at the latest) plus a margin that
 * only a hang exceeds.
 */
async function write(marker: string): Promise<Answer> {
  const res = await fetch(`${stack.baseUrl}/Companies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ Name: marker }),
    signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS + 60_000),
  });
  const text = await res.text();
  const answer: Answer = { marker, status: res.status };
  if (res.status >= 400) {
    if (res.headers.get('content-type') !== 'application/problem+json; charset=utf-8') {
      throw new Error(`${marker}: ${res.status} is not a problem: ${text}`);
    }
    answer.problem = JSON.parse(text) as Problem;
  }
  return answer;
}

test.serial('the primary killed: 503s during the failover, then writes go on; nothing lost or doubled', async (t) => {
  const answers: Answer[] = [];
  let n = 0;
  const next = async () => {
    const answer = await write(`Failover ${process.pid} #${String(n++).padStart(4, '0')}`);
    answers.push(answer);
    // A client backs off after a 503 (Retry-After asks for more; the failover is what is tested here).
    if (answer.status === 503) await new Promise((r) => setTimeout(r, 100));
    return answer;
  };
  // Before: a few answered writes on the first primary.
  for (let i = 0; i < 5; i++) t.is((await next()).status, 201);

  // Two writers keep writing while the primary dies and, once the replica may be promoted, the
  // sentinels fail over. Until then no primary exists: writes must be 503s, not hangs.
  let failedOver = false;
  const writer = async () => {
    let createdAfter = 0;
    while (!failedOver || createdAfter < 5) {
      const answer = await next();
      if (failedOver && answer.status === 201) createdAfter += 1;
    }
  };
  const writers = [writer(), writer()];
  const { port: old, release } = await sentinel.killPrimary();
  try {
    const killedAt = answers.length;
    await eventually(async () => answers.slice(killedAt).some((a) => a.status === 503), 60_000);
  } finally {
    release();
  }
  const promoted = await sentinel.failedOverFrom(old);
  t.not(promoted, old);
  failedOver = true;
  await Promise.all(writers);

  // Every answer is a 201, a 202 (queued, outcome later) or a clean 503 problem with Retry-After.
  const unexpected = answers.filter((a) => ![201, 202, 503].includes(a.status));
  t.deepEqual(unexpected, [], 'no other status during the failover');
  for (const a of answers.filter((x) => x.status === 503)) {
    t.is(a.problem?.status, 503, a.marker);
  }
  t.true(
    answers.slice(-5).some((a) => a.status === 201),
    'writes answer 201 again after the failover, without a restart',
  );

  // Nothing doubled, nothing answered 201 lost.
  const rows = (await stack.knex('companies').whereLike('name', `Failover ${process.pid} #%`).select('id', 'name')) as {
    id: number;
    name: string;
  }[];
  const count = new Map<string, number>();
  for (const row of rows) count.set(row.name, (count.get(row.name) ?? 0) + 1);
  for (const a of answers) {
    const present = count.get(a.marker) ?? 0;
    if (a.status === 201) t.is(present, 1, `${a.marker} answered 201 exists once`);
    else t.true(present <= 1, `${a.marker} answered ${a.status} is absent or present once (${present})`);
  }
  t.is(rows.length, new Set(rows.map((r) => r.name)).size, 'no marker twice');
  t.true(
    rows.every((row) => answers.some((a) => a.marker === row.name)),
    'no row without a write',
  );

  // The activity log catches up: one CompanyCreated entry per row.
  const ids = rows.map((row) => encodeId('Company', row.id));
  await eventually(async () => {
    const logged = (await stack
      .knex('activities')
      .whereIn('entity_id', ids)
      .where({ event_type: 'CompanyCreated' })
      .count<{ count: string }[]>('* as count')) as { count: string }[];
    return Number(logged[0]!.count) >= ids.length;
  }, 120_000).catch(() => undefined);
  const entries = (await stack
    .knex('activities')
    .whereIn('entity_id', ids)
    .where({ event_type: 'CompanyCreated' })
    .pluck('entity_id')) as string[];
  t.deepEqual([...entries].sort(), [...ids].sort(), 'one activity entry per existing row');
  // /Jobs, Bull Board and the queue gauges share the API's connection: it followed the failover too.
  await eventually(async () => (await stack.get(`/Jobs?queue=${QUEUE.commands}`)).status === 200, 60_000);
  t.is((await stack.get('/admin/queues/api/queues')).status, 200);
  t.regex((await stack.get('/metrics')).text, /^emapi_queue_jobs\{queue="commands",state="completed"\} [1-9]/m);
  const uncertain = answers.filter((a) => a.status === 202 || a.problem?.detail?.includes('may still be applied'));
  t.log(
    `uncertain answers: ${uncertain.map((a) => `${a.status} ${a.marker} present ${count.get(a.marker) ?? 0}`).join('; ')}`,
  );
  t.log(
    `${answers.length} writes: ${['201', '202', '503'].map((s) => `${answers.filter((a) => String(a.status) === s).length}×${s}`).join(', ')}`,
  );
});

test.serial(
  'worker processes of every kind find the (new) primary from REDIS_SENTINELS and stop cleanly',
  async (t) => {
    const bare = await startStack({
      workers: [],
      env: { REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_NAME: sentinel.name },
    });
    t.teardown(() => bare.close());
    const workers = spawnWorkerProcesses(workerProcessEnv(bare));
    t.teardown(() => workers.kill());

    const id = await create(bare, 'Companies', { Name: 'Promoted Works' });
    await eventually(async () => {
      const res = await bare.get(`/Activities?$filter=${encodeURIComponent(`EntityId eq '${id}'`)}`);
      return (res.body as unknown[]).length === 1;
    }, 30_000);

    t.deepEqual(await workers.stop(), [0, 0, 0], 'each process closes its connections and exits');
  },
);
