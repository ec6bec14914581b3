import test from 'ava';
import fc from 'fast-check';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { positionOfToken } from '../../api/http/consistency';
import { ReplicaSet } from '../../db/replicas/replica-set';
import { eventually } from '../support/queues';
import { startReplica, type TestReplica } from '../support/replica';
import { startStack, type Stack } from '../support/stack';

/**
 * Reads on a real streaming replica (DESIGN §14), made with `pg_basebackup -R` from the test
 * server. While its replay is paused (or delayed an hour) the replica lacks every later write, so
 * what a read shows tells which database served it.
 */

const HOUR_MS = 3_600_000;
const quiet = { warn: () => undefined, error: () => undefined, debug: () => undefined, info: () => undefined };
let replica: TestReplica;
let stack: Stack;
let replicaUrl: string;
let onReplica: Knex;

test.before(async () => {
  replica = await startReplica();
  stack = await startStack({
    env: { REPLICA_MAX_LAG_MS: String(HOUR_MS), REPLICA_WAIT_MS: '250', METRICS_ENABLED: 'true' },
    replicaUrls: (direct) => [replica.urlFor(direct)],
  });
  replicaUrl = replica.urlFor(stack.directDatabaseUrl);
  onReplica = createKnex(replicaUrl, 2, quiet);
  // The test database may reach the replica after the API's first probe (then it is down for 5 s).
  // Other test files write to the same server all along (every one clones a database), so under the
  // whole suite the replica can be far behind for a while: up (it has this database) is enough here.
  await eventually(async () => {
    const ready = await stack.get('/health/ready');
    const [shown] = (ready.body as { replicas?: { state: string }[] }).replicas ?? [];
    return shown?.state === 'up';
  }, 180_000);
});
test.after.always(async () => {
  await onReplica?.destroy();
  await stack?.close();
  await replica?.destroy();
});

async function create(name: string): Promise<{ id: string; token: string }> {
  const res = await stack.request('POST', '/Companies', { body: { Name: name } });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  const token = res.headers.get('x-consistency-token');
  if (!token) throw new Error('a write answer without X-Consistency-Token');
  return { id: res.headers.get('location')!.split('/').pop()!, token };
}

const names = async (headers: Record<string, string> = {}) => {
  const res = await stack.get('/Companies?$top=1000', headers);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return (res.body as { Name: string }[]).map((row) => row.Name);
};

/** Waits until the replica itself has replayed the company `name`. */
const replicated = (name: string) =>
  eventually(async () => Boolean(await onReplica('companies').where({ name }).first()), 180_000);

test.serial('reads go to the replica: stale without a token, never stale with the token of the write', async (t) => {
  const before = await create('Before');
  t.regex(before.token, /^[0-9A-F]{1,8}-[0-9A-F]{1,8}$/);
  await replicated('Before');
  // The API's probe has seen it replay a commit (its lag is known, so reads without a token go there).
  await eventually(async () => {
    const ready = await stack.get('/health/ready');
    const [shown] = (ready.body as { replicas?: { lagMs: number | null }[] }).replicas ?? [];
    return typeof shown?.lagMs === 'number';
  }, 30_000);

  await replica.pauseReplay();
  try {
    const paused = await create('Paused');
    // Without the token: the replica (within REPLICA_MAX_LAG_MS) answers, and has not replayed it.
    t.is((await stack.get(`/Companies/${paused.id}`)).status, 404);
    t.false((await names()).includes('Paused'));
    // With it: no replica gets that far within REPLICA_WAIT_MS, so the primary answers.
    const withToken = { 'x-consistency-token': paused.token };
    t.is((await stack.get(`/Companies/${paused.id}`, withToken)).status, 200);
    t.true((await names(withToken)).includes('Paused'));
    t.is((await stack.get('/Companies/$count', withToken)).text, String((await names(withToken)).length));
    // A token the replica has replayed is served by the replica (which still lacks the later write).
    t.false((await names({ 'x-consistency-token': before.token })).includes('Paused'));
    t.true((await names({ 'x-consistency-token': before.token })).includes('Before'));
  } finally {
    await replica.resumeReplay();
  }
  await replicated('Paused');
});

test.serial('a read with a token waits for the replica to replay that far, within REPLICA_WAIT_MS', async (t) => {
  const primary = createKnex(stack.directDatabaseUrl, 2);
  const set = new ReplicaSet(primary, {
    urls: [replicaUrl],
    waitMs: 10_000,
    maxLagMs: HOUR_MS,
    poolMax: 2,
    logger: quiet,
  });
  try {
    await set.start();
    await replica.pauseReplay();
    const written = await create('Soon');
    const choice = set.choose(positionOfToken(written.token));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await replica.resumeReplay();
    // The replica, once it replayed the write: not the primary, and not before.
    const chosen = await choice;
    t.truthy(chosen.replica);
    t.truthy(await chosen.knex('companies').where({ name: 'Soon' }).first());
  } finally {
    await replica.resumeReplay();
    await set.close();
    await primary.destroy();
  }
});

test.serial(
  'every successful write answers a token; a token the service never issued is a 400 naming it',
  async (t) => {
    const { id } = await create('Tokens');
    const patch = await stack.request('PATCH', `/Companies/${id}`, {
      headers: { 'content-type': 'application/json-patch+json' },
      raw: JSON.stringify([{ op: 'replace', path: '/Name', value: 'Tokens 2' }]),
    });
    t.is(patch.status, 204);
    t.regex(patch.headers.get('x-consistency-token') ?? '', /^[0-9A-F]+-[0-9A-F]+$/);
    const put = await stack.request('PUT', `/Companies/${id}`, { body: { Name: 'Tokens 3' } });
    t.regex(put.headers.get('x-consistency-token') ?? '', /^[0-9A-F]+-[0-9A-F]+$/);
    const del = await stack.request('DELETE', `/Companies/${id}`);
    t.is(del.status, 204);
    t.regex(del.headers.get('x-consistency-token') ?? '', /^[0-9A-F]+-[0-9A-F]+$/);
    const failed = await stack.request('POST', '/Companies', { body: {} });
    t.is(failed.status, 400);
    t.is(failed.headers.get('x-consistency-token'), null);

    for (const bad of ['nonsense', '0/1', '1-2-3', 'FFFFFFFFF-0', '-', 'G-1']) {
      const res = await stack.get('/Companies', { 'x-consistency-token': bad });
      t.is(res.status, 400, bad);
      t.regex((res.body as { detail: string }).detail, /X-Consistency-Token/);
    }
    // Well formed but beyond the primary's WAL position: never issued, so refused rather than
    // left to hold the read for REPLICA_WAIT_MS and send it to the primary (issue 24).
    const [{ lsn }] = (await stack.knex.raw<{ rows: { lsn: string }[] }>('select pg_current_wal_lsn()::text as lsn'))
      .rows as [{ lsn: string }];
    const nextSegment = `${(parseInt(lsn.split('/')[0]!, 16) + 1).toString(16).toUpperCase()}-0`;
    for (const beyond of ['FFFFFFFF-FFFFFFFF', nextSegment]) {
      for (const path of ['/Companies', `/Companies/${id}`, '/Companies/$count', '/Export/Companies']) {
        const res = await stack.get(path, { 'x-consistency-token': beyond });
        t.is(res.status, 400, `${beyond} ${path}`);
        t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        t.regex((res.body as { detail: string }).detail, /^X-Consistency-Token: .*beyond the primary/);
      }
    }
  },
);

test.serial(
  'tokens are judged against the primary position the probe keeps: one question only for tokens beyond it',
  async (t) => {
    const primary = createKnex(stack.directDatabaseUrl, 2);
    let asked = 0;
    primary.on('query', (query: { sql: string }) => {
      if (query.sql.includes('pg_current_wal_lsn')) asked++;
    });
    // Not started: no probe runs, so every question to the primary is one a token caused.
    const set = new ReplicaSet(primary, {
      urls: [replicaUrl],
      waitMs: 0,
      maxLagMs: HOUR_MS,
      poolMax: 2,
      logger: quiet,
    });
    try {
      const first = await create('Judged');
      for (let i = 0; i < 20; i++) await set.choose(positionOfToken(first.token));
      t.is(asked, 1, 'the first token asked; the same token after it did not');
      // A write newer than what the set last saw: one more question, and its token is good.
      const later = await create('Judged later');
      await set.choose(positionOfToken(later.token));
      await set.choose(positionOfToken(first.token));
      t.is(asked, 2);
      // Twenty hostile reads at once share the questions they cause, and every one is refused.
      const refused = await Promise.allSettled(
        Array.from({ length: 20 }, () => set.choose(positionOfToken('FFFFFFFF-FFFFFFFF'))),
      );
      t.true(
        refused.every((r) => r.status === 'rejected' && /^X-Consistency-Token: /.test((r.reason as Error).message)),
      );
      t.true(asked <= 4, `${asked} questions`);
    } finally {
      await set.close();
      await primary.destroy();
    }
  },
);

test.serial('write answers inside a $batch carry the token too; its reads and failures do not', async (t) => {
  await replica.pauseReplay();
  try {
    const res = await stack.request('POST', '/$batch', {
      body: {
        requests: [
          { id: 'c1', method: 'POST', url: '/Companies', body: { Name: 'Batched' } },
          { id: 'r1', method: 'GET', url: '/Companies?$top=1' },
          { id: 'bad', method: 'POST', url: '/Companies', body: {} },
        ],
      },
    });
    t.is(res.status, 200);
    const [created, read, bad] = (res.body as { responses: { status: number; headers: Record<string, string> }[] })
      .responses;
    t.is(created!.status, 201);
    const token = created!.headers['x-consistency-token'];
    t.regex(token ?? '', /^[0-9A-F]+-[0-9A-F]+$/);
    t.is(read!.headers['x-consistency-token'], undefined);
    t.is(bad!.status, 400);
    t.is(bad!.headers['x-consistency-token'], undefined);
    const id = created!.headers.location!.split('/').pop()!;
    t.is((await stack.get(`/Companies/${id}`)).status, 404); // the paused replica
    t.is((await stack.get(`/Companies/${id}`, { 'x-consistency-token': token! })).status, 200);
  } finally {
    await replica.resumeReplay();
  }
  await replicated('Batched');
});

test.serial('health and metrics show the replica and its lag', async (t) => {
  const ready = await stack.get('/health/ready');
  t.is(ready.status, 200);
  const [shown] = (ready.body as { replicas: { name: string; state: string; lagMs: number | null }[] }).replicas;
  t.is(shown!.state, 'up');
  t.is(shown!.name, new URL(replicaUrl).host + new URL(replicaUrl).pathname);
  t.is(typeof shown!.lagMs, 'number');
  const metrics = await stack.get('/metrics');
  t.regex(metrics.text, new RegExp(`emapi_replica_lag_seconds\\{replica="${shown!.name}"\\} [0-9.e-]+`));
});

test.serial('a replica behind REPLICA_MAX_LAG_MS is skipped by reads without a token', async (t) => {
  const primary = createKnex(stack.directDatabaseUrl, 2);
  const set = new ReplicaSet(primary, { urls: [replicaUrl], waitMs: 0, maxLagMs: 1000, poolMax: 2, logger: quiet });
  try {
    await set.start();
    await replica.pauseReplay();
    await create('Behind');
    // Its last replayed commit ages past a second while it replays nothing new.
    const skipped = await eventually(async () => {
      const chosen = await set.choose();
      return chosen.replica === undefined ? chosen : undefined;
    }, 10_000);
    t.is(skipped.knex, primary);
    t.true((set.status()[0]!.lagMs ?? 0) > 1000);
    t.false((await names()).includes('Behind')); // the stack's own limit is an hour: it still reads there
  } finally {
    await replica.resumeReplay();
    await set.close();
    await primary.destroy();
  }
  await replicated('Behind');
});

test.serial('the replica stopped mid-run: every read answers from the primary; back, reads return to it', async (t) => {
  await replica.pauseReplay();
  const marker = await create('WhileDown');
  // Read at its next start: WhileDown stays unreplayed there, which shows who serves.
  await replica.setApplyDelay(HOUR_MS);
  await replica.stop();
  const statuses = new Set<number>();
  for (let i = 0; i < 20; i++) {
    statuses.add((await stack.get(`/Companies/${marker.id}`)).status);
    statuses.add((await stack.get('/Companies?$count=true&$top=5')).status);
    statuses.add((await stack.get(`/Companies/${marker.id}`, { 'x-consistency-token': marker.token })).status);
  }
  // All from the primary (which has the write the replica lacked): never a 5xx.
  t.deepEqual([...statuses], [200]);
  const ready = await stack.get('/health/ready');
  t.is(ready.status, 200);
  t.is((ready.body as { replicas: { state: string }[] }).replicas[0]!.state, 'down');

  await replica.start();
  await eventually(async () => (await stack.get(`/Companies/${marker.id}`)).status === 404, 180_000);
  t.is((await stack.get(`/Companies/${marker.id}`, { 'x-consistency-token': marker.token })).status, 200);
  await replica.setApplyDelay(0);
  await replicated('WhileDown');
});

test.serial('any X-Consistency-Token a client sends: 200 or a 400 problem naming it, never a 5xx', async (t) => {
  const hex = fc.stringMatching(/^[0-9A-Fa-f]{1,9}$/);
  const token = fc.oneof(
    fc.string({
      unit: fc.constantFrom(
        ...' !#$%&()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~'.split(''),
      ),
    }),
    fc.tuple(hex, fc.constantFrom('-', '/', ''), hex).map(([a, sep, b]) => `${a}${sep}${b}`),
  );
  await fc.assert(
    fc.asyncProperty(token, async (value) => {
      const res = await stack.get('/Companies?$top=1', { 'x-consistency-token': value });
      if (res.status === 200) return;
      t.is(res.status, 400, value);
      t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      t.regex((res.body as { detail: string }).detail, /^X-Consistency-Token: /);
    }),
    { numRuns: 60 },
  );
});
