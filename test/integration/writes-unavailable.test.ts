import test from 'ava';
import { testQueue } from '../support/queues';
import { encodeId } from '../../domain/ids/id-codec';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { CuttableProxy } from '../support/cuttable-proxy';
import { startStack, type Stack } from '../support/stack';
import { assertProblem, waitFor } from '../support/writes';

/**
 * Redis unreachable: a write is refused at once with a 503 problem and nothing is enqueued
 * (DESIGN §6). The stack reaches Redis through a TCP proxy the test can cut and restore.
 */

let stack: Stack;
let proxy: CuttableProxy;
test.before(async () => {
  proxy = new CuttableProxy(new URL(process.env.REDIS_URL!));
  await proxy.open();
  stack = await startStack({
    workers: [(config) => startCommandWorker(config)],
    env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` },
  });
});
test.after.always(async () => {
  await proxy?.open().catch(() => undefined);
  await stack?.close();
  await proxy?.cut();
});

test.serial('503 while Redis is unreachable, nothing enqueued; writes work again once it is back', async (t) => {
  t.is((await stack.request('POST', '/Companies', { body: { Name: 'Before' } })).status, 201);
  await proxy.cut();
  // Until the connection's loss is noticed a write may still go through, or be caught on its way
  // (a 503 with a Location: it may still be applied); every answer is kept.
  const answered = new Map<string, { status: number; maybe: boolean }>();
  const refused = await waitFor(async () => {
    const name = `During ${answered.size}`;
    const res = await stack.request('POST', '/Companies', { body: { Name: name } });
    answered.set(name, { status: res.status, maybe: res.headers.has('location') });
    return res.status === 503 && !res.headers.has('location') ? res : undefined;
  });
  assertProblem(t, refused, 503, 'Service Unavailable', {
    detail: 'The command queue is unavailable; nothing was changed.',
  });
  t.is(refused.headers.get('retry-after'), '5');
  // Refused before anything is sent, not after waiting on the command deadline (COMMAND_TIMEOUT_MS):
  // a wait would end in a 202 or in a 503 that says the command may still be applied (a Location).
  const deleting = await stack.request('DELETE', `/Companies/${encodeId('Company', 999_999)}`);
  assertProblem(t, deleting, 503, 'Service Unavailable', {
    detail: 'The command queue is unavailable; nothing was changed.',
  });
  t.false(deleting.headers.has('location'));

  await proxy.open();
  const after = await waitFor(async () => {
    const res = await stack.request('POST', '/Companies', { body: { Name: 'After' } });
    return res.status === 201 ? res : undefined;
  }, 20_000);
  t.is(after.status, 201);
  const names = new Set(((await stack.knex('companies').select('name')) as { name: string }[]).map((r) => r.name));
  for (const [name, { status, maybe }] of answered) {
    if (!maybe) t.is(names.has(name), status === 201, `${name} answered ${status}`);
  }
  t.true(names.has('Before') && names.has('After'));
});

test.serial(
  'a connection lost while the job is on its way: a 503 that says it may still be applied, and it is',
  async (t) => {
    const direct = testQueue({ ...stack.config, redis: { url: process.env.REDIS_URL! } }, QUEUE.commands);
    t.teardown(() => direct.close());
    await waitFor(
      async () => (await stack.request('POST', '/Companies', { body: { Name: 'Warm' } })).status === 201,
      20_000,
    );

    // The job's own add reaches Redis; from then on Redis's answers never come back.
    proxy.swallowRepliesAfter = 'In flight';
    const answer = stack.request('POST', '/Companies', { body: { Name: 'In flight' } });
    const queued = await waitFor(async () => {
      const jobs = await direct.getJobs(['wait', 'active', 'completed']);
      return jobs.find((job) => (job.data as { body?: { Name?: string } }).body?.Name === 'In flight');
    });
    await proxy.cut();
    const res = await answer;
    proxy.swallowReplies = false;
    proxy.swallowRepliesAfter = undefined;
    await proxy.open();

    assertProblem(t, res, 503, 'Service Unavailable', {
      detail: `The command queue became unreachable while the command was being queued; it may still be applied. Its outcome will be at /Commands/${queued.id} once the queue is back.`,
    });
    t.is(res.headers.get('location'), `/Commands/${queued.id}`);
    await waitFor(async () => (await stack.knex('companies').where({ name: 'In flight' }).first()) as unknown, 20_000);
    const state = await waitFor(async () => {
      const r = await stack.get(`/Commands/${queued.id}`);
      return r.status === 200 && (r.body as { State: string }).State !== 'Pending' ? r : undefined;
    }, 20_000);
    t.like(state.body as object, { Id: queued.id, State: 'Succeeded' });
  },
);
