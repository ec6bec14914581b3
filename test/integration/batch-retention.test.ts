import test from 'ava';
import { Job } from 'bullmq';
import { verifyCommand } from '../../domain/commands/command-signature';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { idempotentCommandId } from '../../domain/writes/command-ids';
import type { RequestResult } from '../../domain/results/request-result';
import { createLogger } from '../../infra/logger';
import { createRedis } from '../../infra/redis';
import { redisBatchJournal } from '../../workers/commands/batch-journal';
import { sendBatch, type BatchRequest } from '../support/batch';
import { TestQueues } from '../support/queues';
import { startStack, type Stack } from '../support/stack';

/**
 * What a finished batch leaves in Redis (DESIGN §12, §13): its results live in the command log,
 * so its job keeps only what names it, whatever the size of the body it carried. And what the
 * release before results were recorded left there and in Redis (docs/architecture.md, "HTTP at
 * the edge").
 */

let stack: Stack;
let queues: TestQueues;
test.before(async () => {
  stack = await startStack();
  queues = new TestQueues(stack.config);
});
test.after.always(async () => {
  await queues?.close();
  await stack?.close();
});

test('a finished batch keeps a signed stub of its job; /Commands and a repeat still answer its response', async (t) => {
  const note = 'n'.repeat(5_000);
  const requests: BatchRequest[] = Array.from({ length: 100 }, (_, i) => ({
    id: `s${i}`,
    atomicityGroup: 'g',
    method: 'POST',
    url: 'Schemes',
    body: { SchemeName: `Retained ${i}`, Notes: [{ Text: note }] },
  }));
  const key = { 'idempotency-key': 'retention-1' };
  const first = await sendBatch(stack, requests, key);
  t.is(first.status, 200, first.text);

  const id = idempotentCommandId('mock-user', 'retention-1');
  const job = (await Job.fromId(queues.queue(QUEUE.commands), id))!;
  t.truthy(job, 'the job is kept for its retention');
  const data = job.data as { steps: unknown[]; subject: string; requestHash?: string };
  t.deepEqual(data.steps, [], 'the requests are gone from Redis');
  t.is(data.subject, 'mock-user');
  t.truthy(data.requestHash);
  t.true(verifyCommand(job.data, stack.config.commandSigningKey), 'the stub is signed');
  t.true(JSON.stringify(job.data).length < 1_000, `job data of ${JSON.stringify(job.data).length} bytes`);

  const state = await stack.get(`/Commands/${id}`);
  t.is(state.status, 200);
  t.deepEqual((state.body as { Response: unknown }).Response, JSON.parse(first.text));
  const repeat = await sendBatch(stack, requests, key);
  t.is(repeat.status, 200);
  t.is(repeat.text, first.text, 'the repeat answers the first response, byte for byte');
  t.is(Number((await stack.knex('schemes').where('scheme_name', 'like', 'Retained %').count({ n: '*' }))[0]!.n), 100);
});

test('a batch recorded by the release before results (its response text) is still answered as recorded', async (t) => {
  const requests: BatchRequest[] = [{ id: 'c1', method: 'POST', url: 'Companies', body: { Name: 'Legacy record' } }];
  const key = { 'idempotency-key': 'legacy-record-1' };
  const first = await sendBatch(stack, requests, key);
  t.is(first.status, 200, first.text);
  const id = idempotentCommandId('mock-user', 'legacy-record-1');
  // As the previous release recorded it: the rendered response, a JSON string.
  const text = '{"responses":[{"id":"c1","status":201,"headers":{"location":"/Companies/AAAAAA","etag":"\\"1\\""}}]}';
  await stack
    .knex('command_log')
    .where('command_id', id)
    .update({ result: JSON.stringify({ ok: true, batch: true, responses: text }) });

  const repeat = await sendBatch(stack, requests, key);
  t.is(repeat.status, 200);
  t.is(repeat.text, text, 'the recorded text, byte for byte');
  const state = await stack.get(`/Commands/${id}`);
  t.deepEqual((state.body as { Response: unknown }).Response, JSON.parse(text));
});

test('the batch journal hands back results, and leaves out the answers an older release journaled', async (t) => {
  const redis = createRedis(stack.config.redis, 'worker');
  try {
    const journal = redisBatchJournal(redis, stack.config.queuePrefix, createLogger('test', 'silent'));
    const batchId = 'journal-legacy-1';
    const results: RequestResult[] = [
      { kind: 'count', n: 3, limited: false },
      { kind: 'failed', failure: { kind: 'NotFound', errors: ['gone'] } },
    ];
    await journal.append(batchId, 0, results);
    // What the release before results journaled for a unit: its rendered answers.
    await redis.hset(
      `${stack.config.queuePrefix}:batch-journal:${batchId}`,
      '1',
      JSON.stringify([{ status: 200, headers: { 'content-type': 'text/plain' }, body: '3' }]),
    );
    const loaded = await journal.load(batchId);
    t.deepEqual([...loaded.entries()], [[0, results]], 'unit 1 counts as not journaled: rebuilt from the log');
    await journal.clear(batchId);
    t.deepEqual(await journal.load(batchId), new Map());
  } finally {
    redis.disconnect();
  }
});
