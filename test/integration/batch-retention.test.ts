import test from 'ava';
import { Job } from 'bullmq';
import { verifyCommand } from '../../domain/commands/command-signature';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { idempotentCommandId } from '../../domain/writes/command-ids';
import { sendBatch, type BatchRequest } from '../support/batch';
import { TestQueues } from '../support/queues';
import { startStack, type Stack } from '../support/stack';

/**
 * What a finished batch leaves in Redis (DESIGN §12, §13): its response lives in the command log,
 * so its job keeps only what names it, whatever the size of the body it carried.
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
