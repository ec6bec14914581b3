import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Worker, type Job } from 'bullmq';
import { commandBusOptionsOf, createCommandBus, type CommandBus } from '../../api/commands/command-bus';
import type { Command, CommandResult } from '../../domain/commands/command';
import { QUEUE, type CommandReply } from '../../domain/queues/queue-contracts';
import { commandRepliesChannel, publishReply, replyRouteOf } from '../../infra/command-replies';
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

/** Every reply published on any of the deployment's reply channels from now on, with its channel. */
async function listenToAll(): Promise<{ channel: string; reply: CommandReply }[]> {
  const subscriber = redis('worker');
  const heard: { channel: string; reply: CommandReply }[] = [];
  subscriber.on('pmessage', (_pattern: string, channel: string, message: string) =>
    heard.push({ channel, reply: JSON.parse(message) as CommandReply }),
  );
  await subscriber.psubscribe(`${commandRepliesChannel(stack.config.queuePrefix)}*`);
  return heard;
}

test.serial("the command worker replies with the command's result, the one the API answers with", async (t) => {
  const heard = await listenToAll();
  const worker = await startCommandWorker(stack.config);
  const res = await stack.request('POST', '/Countries', { body: { Name: 'Replyland', IsoCode: 'RL' } });
  await worker.close();
  t.is(res.status, 201, res.text);
  const id = (res.headers.get('location') ?? '').split('/').pop();
  const replies = heard.filter(
    ({ reply: r }) => 'result' in r && (r.result as { encodedId?: string }).encodedId === id,
  );
  t.is(replies.length, 1, `one reply carrying ${id}: ${JSON.stringify(heard)}`);
  t.like((replies[0]!.reply as { result: CommandResult }).result, {
    ok: true,
    entity: 'Country',
    encodedId: id,
    version: 1,
  });
  // On the API process's own channel, not the one every API process hears.
  t.true(replies[0]!.channel.startsWith(`${commandRepliesChannel(stack.config.queuePrefix)}:`), replies[0]!.channel);
});

test.serial('a reply wakes only the API process that queued the command', async (t) => {
  const heard = await listenToAll();
  const worker = await startCommandWorker(stack.config);
  const [a, b] = await Promise.all(
    [0, 1].map(() => createCommandBus(commandBusOptionsOf(stack.config, redis('producer'), logger))),
  );
  t.teardown(() => Promise.all([a!.close(), b!.close(), worker.close()]));
  t.not(a!.replyChannel, b!.replyChannel);
  const sent = { ...command(), body: { Name: 'Routed', IsoCode: 'RU' } };
  const outcome = await a!.dispatch(sent, 10_000);
  t.like(outcome, { state: 'finished', result: { ok: true, entity: 'Country' } });
  t.deepEqual(
    heard.filter(({ reply }) => reply.jobId === sent.commandId).map(({ channel }) => channel),
    [a!.replyChannel],
  );
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
  // The stand-in replies ahead of its job's completion, as the command worker does, with what the case wants heard:
  // the success on the shared channel (as a worker from before routes would), the failure on the job's route.
  const { bus, close } = await busWith(async (job) => {
    const reply = replies[job.id!]!;
    await publishReply(publisher, prefix, reply, 'failedReason' in reply ? replyRouteOf(job.data) : undefined);
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
