import { randomUUID } from 'node:crypto';
import test from 'ava';
import { TestQueues } from '../support/queues';
import { signCommand } from '../../domain/commands/command-signature';
import type { Command } from '../../domain/commands/command';
import { createKnex } from '../../db/knex';
import { createLogger } from '../../infra/logger';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { createCommandRunner } from '../../workers/commands/command-runner';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { create, patch, read } from '../support/writes';

/**
 * Several command workers at once on one row, and the exactly-once guarantee of command ids: a
 * command delivered twice (to the handler, or as a second job) is applied once.
 */

type Doc = Record<string, unknown>;

let stack: Stack;
test.before(async () => {
  // Two command workers (as two processes would be), each running several jobs at once.
  const commandWorker = (config: Parameters<typeof startCommandWorker>[0]) => startCommandWorker(config);
  stack = await startStack({ workers: [commandWorker, commandWorker], env: { WORKER_CONCURRENCY: '8' } });
});
test.after.always(async () => {
  await stack?.close();
});

const count = async (table: string, where: Record<string, unknown>) =>
  Number(((await stack.knex(table).where(where).count({ n: '*' }).first()) as { n: number }).n);

test('20 concurrent PATCHes on one Scheme: 20 notes, one version step each', async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Busy' });
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      patch(stack, `/Schemes/${id}`, [{ op: 'add', path: '/Notes/-', value: { Text: `note ${i}` } }]),
    ),
  );
  t.deepEqual(
    results.map((r) => r.status),
    Array.from({ length: 20 }, () => 204),
  );
  const etags = results.map((r) => Number(JSON.parse(r.headers.get('etag')!)));
  t.deepEqual(
    [...etags].sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i + 2),
  );
  const res = await stack.get(`/Schemes/${id}`);
  t.is(res.headers.get('etag'), '"21"');
  const notes = (res.body as Doc).Notes as Doc[];
  t.is(notes.length, 20);
  t.deepEqual(notes.map((n) => n.Text as string).sort(), Array.from({ length: 20 }, (_, i) => `note ${i}`).sort());
});

test('concurrent PUTs with the same If-Match: exactly one wins', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Contested' });
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      stack.request('PUT', `/Companies/${id}`, { body: { Name: `Winner ${i}` }, headers: { 'if-match': '"1"' } }),
    ),
  );
  const statuses = results.map((r) => r.status).sort();
  t.deepEqual(statuses, [204, 412, 412, 412, 412, 412]);
  const winner = results.findIndex((r) => r.status === 204);
  t.is((await read(stack, `/Companies/${id}`)).Name, `Winner ${winner}`);
});

test('the same command delivered twice to the handler is applied once', async (t) => {
  const knex = createKnex(stack.config.databaseUrl, 4);
  t.teardown(() => knex.destroy());
  const committed: unknown[][] = [];
  const run = createCommandRunner({
    knex,
    logger: createLogger('test', 'silent'),
    onCommitted: (ids) => committed.push(ids),
  });
  const command: Command = {
    commandId: randomUUID(),
    name: 'create',
    entity: 'Company',
    body: { Name: 'Delivered Twice', RegistrationNumber: null, Website: null, Country: null },
    subject: 'tester',
    issuedAt: new Date().toISOString(),
  };
  const first = await run(command);
  // Again as a first delivery (the final command_log insert finds the id), then as a redelivery.
  const second = await run(command);
  const third = await run(command, { redelivered: true });
  // …and at the same time, as a stalled job recovered while the first delivery still runs.
  const concurrent = { ...command, commandId: randomUUID(), body: { ...command.body, Name: 'Delivered At Once' } };
  const [a, b] = await Promise.all([run(concurrent), run(concurrent)]);
  t.true(first.ok);
  t.deepEqual(second, first);
  t.deepEqual(third, first);
  t.deepEqual(a, b);
  t.is(await count('companies', { name: 'Delivered Twice' }), 1);
  t.is(await count('companies', { name: 'Delivered At Once' }), 1);
  t.is(committed.length, 2, 'one event per applied command');
  t.is(await count('command_log', { command_id: command.commandId }), 1);
  const events = (await knex('outbox').whereRaw("event->>'commandId' = ?", [command.commandId])) as unknown[];
  t.is(events.length, 1);
});

test('a command added again as a new job (its first job gone) returns the recorded result', async (t) => {
  const queues = new TestQueues(stack.config);
  t.teardown(() => queues.close());
  const queue = queues.queue(QUEUE.commands);
  const events = await queues.queueEvents(QUEUE.commands);
  const command: Command = {
    commandId: randomUUID(),
    name: 'create',
    entity: 'Country',
    body: { Name: 'Redelivered', IsoCode: 'RD' },
    subject: 'tester',
    issuedAt: new Date().toISOString(),
  };
  const signed = signCommand(command, stack.config.commandSigningKey);
  const firstJob = await queue.add('create', signed, { jobId: command.commandId });
  const first = (await firstJob.waitUntilFinished(events, 10_000)) as unknown;
  await firstJob.remove();
  const secondJob = await queue.add('create', signed, { jobId: command.commandId });
  const second = (await secondJob.waitUntilFinished(events, 10_000)) as unknown;
  t.like(first as Doc, { ok: true, entity: 'Country' });
  t.deepEqual(second, first);
  t.is(await count('countries', { iso_code: 'RD' }), 1);
});
