import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Worker, type Job } from 'bullmq';
import { commandBusOptionsOf, createCommandBus, type CommandBus } from '../../api/commands/command-bus';
import type { Command, CommandResult } from '../../domain/commands/command';
import { QUEUE, type CommandReply } from '../../domain/queues/queue-contracts';
import { commandRepliesChannel, publishReply } from '../../infra/command-replies';
import { createLogger } from '../../infra/logger';
import { createRedis, queuePrefix, withBullConnection, type RedisClient } from '../../infra/redis';
import { startStack, type Stack } from '../support/stack';
import { startCommandWorker } from '../../workers/commands/command-worker';

/**
 * How the API learns a command is done (infra/command-replies.ts): the command worker's reply on
 * the `command-replies` channel, and, when a reply never reaches it, the job's own state. The first
 * test runs the real API and command worker; the others drive the API's command bus against a
 * stand-in worker on the real queue, which replies (or not) as each case needs.
 */

let stack: Stack;
const logger = createLogger('test', 'silent');
const clients: RedisClient[] = [];

test.before(async () => {
  // No worker of its own: each case starts the one it needs, so no other takes its jobs.
  stack = await startStack({ workers: [] });
});
test.after.always(async () => {
  clients.forEach((client) => client.disconnect());
  await stack?.close();
});

function redis(role: 'producer' | 'worker'): RedisClient {
  const client = createRedis(stack.config.redis, role);
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

/** The replies published on the channel from now on. */
async function listen(): Promise<CommandReply[]> {
  const subscriber = redis('worker');
  const heard: CommandReply[] = [];
  subscriber.on('message', (_channel: string, message: string) => heard.push(JSON.parse(message) as CommandReply));
  await subscriber.subscribe(commandRepliesChannel(stack.config.queuePrefix));
  return heard;
}

test.serial("the command worker replies with the command's result, the one the API answers with", async (t) => {
  const heard = await listen();
  const worker = await startCommandWorker(stack.config);
  const res = await stack.request('POST', '/Countries', { body: { Name: 'Replyland', IsoCode: 'RL' } });
  await worker.close();
  t.is(res.status, 201, res.text);
  const id = (res.headers.get('location') ?? '').split('/').pop();
  const reply = heard.find((r) => 'result' in r && (r.result as { encodedId?: string }).encodedId === id);
  t.truthy(reply, `a reply carrying ${id}: ${JSON.stringify(heard)}`);
  t.like((reply as { result: CommandResult }).result, { ok: true, entity: 'Country', encodedId: id, version: 1 });
});

/** The API's bus on the stack's stores, and a stand-in for the command worker on the real queue. */
async function busWith(
  process: (job: Job<Command>) => Promise<CommandResult>,
): Promise<{ bus: CommandBus; close(): Promise<void> }> {
  const bus = await createCommandBus(commandBusOptionsOf(stack.config, redis('producer'), logger));
  const worker = withBullConnection(
    stack.config.redis,
    'worker',
    (connection) =>
      new Worker<Command, CommandResult>(QUEUE.commands, process, {
        connection,
        prefix: queuePrefix(stack.config, QUEUE.commands),
        autorun: true,
      }),
  );
  await worker.waitUntilReady();
  return {
    bus,
    async close() {
      await Promise.all([worker.close(), bus.close()]);
    },
  };
}

function command(): Command {
  return {
    commandId: randomUUID(),
    name: 'create',
    entity: 'Country',
    subject: 'reply-tester',
    body: { Name: 'Nowhere', IsoCode: 'NW' },
    issuedAt: new Date().toISOString(),
  };
}

const done = (encodedId: string): CommandResult => ({
  ok: true,
  entity: 'Country',
  dbId: 1,
  encodedId,
  version: 1,
});

test.serial('without its reply, a command is answered from its job', async (t) => {
  // This stand-in completes jobs and tells no one: the bus reads the job's state.
  const { bus, close } = await busWith(async (job) => done(`silent-${job.id}`));
  const sent = command();
  const outcome = await bus.dispatch(sent, 10_000).finally(close);
  t.deepEqual(outcome, { state: 'finished', result: done(`silent-${sent.commandId}`) });
});

test.serial('a reply settles the wait with the result it carries, a failed one with its reason', async (t) => {
  const publisher = redis('producer');
  const prefix = stack.config.queuePrefix;
  const replies: Record<string, CommandReply> = {};
  // The stand-in replies ahead of its job's completion, as the command worker does, with what the case wants heard.
  const { bus, close } = await busWith(async (job) => {
    await publishReply(publisher, prefix, replies[job.id!]!);
    // The job's own outcome differs from the reply, so the answer shows which one settled the wait.
    return done('from-the-job');
  });
  const ok = command();
  replies[ok.commandId] = { jobId: ok.commandId, result: done('from-the-reply') };
  t.deepEqual(await bus.dispatch(ok, 10_000), { state: 'finished', result: done('from-the-reply') });

  const failed = command();
  replies[failed.commandId] = { jobId: failed.commandId, failedReason: 'the store went away' };
  t.deepEqual(await bus.dispatch(failed, 10_000).finally(close), { state: 'failed', reason: 'the store went away' });
});
