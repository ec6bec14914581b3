import test from 'ava';
import { ALL_QUEUES, QUEUE, type QueueName } from '../../domain/queues/queue-contracts';
import { queuePrefix } from '../../infra/redis';
import { batch, createdId } from '../support/batch';
import { checkQueuesListed, eventually } from '../support/queues';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { spawnWorkerProcesses } from '../support/worker-processes';
import { create, patch, read } from '../support/writes';

/**
 * The service on a real three-primary Redis Cluster (DESIGN §14, REDIS_CLUSTER_NODES): the API,
 * every worker kind, /Jobs and Bull Board on ioredis Cluster connections, each queue's keys under
 * its own hash tag. Never a mock: the cluster is started by this file and torn down after it.
 */

let cluster: RedisCluster;
let stack: Stack;
let prefix: string;

/** Slot ranges of each primary, from CLUSTER NODES: port → [from, to][] */
async function slotOwners(): Promise<Map<number, [number, number][]>> {
  const owners = new Map<number, [number, number][]>();
  for (const line of (await cluster.cli(cluster.ports[0]!, 'cluster', 'nodes')).trim().split('\n')) {
    const fields = line.split(' ');
    const port = Number(/:(\d+)@/.exec(fields[1]!)![1]);
    const ranges = fields.slice(8).filter((f) => /^\d+(-\d+)?$/.test(f));
    owners.set(
      port,
      ranges.map((r) => {
        const [from, to] = r.split('-').map(Number);
        return [from!, to ?? from!];
      }),
    );
  }
  return owners;
}

async function ownerOf(key: string, owners: Map<number, [number, number][]>): Promise<number> {
  const slot = Number((await cluster.cli(cluster.ports[0]!, 'cluster', 'keyslot', key)).trim());
  for (const [port, ranges] of owners) if (ranges.some(([from, to]) => slot >= from && slot <= to)) return port;
  throw new Error(`no node serves slot ${slot}`);
}

test.before(async () => {
  cluster = await startRedisCluster();
  // Four queues hash to four slots of three primaries: usually more than one node, not always. The
  // file takes a QUEUE_PREFIX whose queues' hash tags do land on several nodes, so the check below
  // (keys really spread) is about where the service put them, not about luck.
  const owners = await slotOwners();
  for (let n = 0; ; n++) {
    prefix = `cluster-${process.pid}-${n}`;
    const nodes = new Set<number>();
    for (const name of ALL_QUEUES) nodes.add(await ownerOf(`{${prefix}:${name}}`, owners));
    if (nodes.size > 1) break;
  }
  stack = await startStack({ env: { REDIS_CLUSTER_NODES: cluster.seeds, QUEUE_PREFIX: prefix } });
});

test.after.always(async () => {
  await stack?.close();
  await cluster?.stop();
});

test.serial('POST, PATCH, DELETE and a $batch are answered through the cluster', async (t) => {
  t.deepEqual(stack.config.redis, {
    clusterNodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
  });
  const id = await create(stack, 'Companies', { Name: 'Clustered Holdings' });
  const patched = await patch(stack, `/Companies/${id}`, [{ op: 'replace', path: '/Name', value: 'Clustered Group' }]);
  t.is(patched.status, 204, patched.text);
  t.is((await read<{ Name: string }>(stack, `/Companies/${id}`)).Name, 'Clustered Group');
  const doomed = await create(stack, 'Addresses', { AddressLine: '1 Slot Street' });
  t.is((await stack.request('DELETE', `/Addresses/${doomed}`)).status, 204);
  t.is((await stack.get(`/Addresses/${doomed}`)).status, 404);

  const responses = await batch(stack, [
    { id: 'a', method: 'POST', url: 'Companies', body: { Name: 'Batched Shard One' } },
    { id: 'b', method: 'POST', url: 'Companies', body: { Name: 'Batched Shard Two' }, atomicityGroup: 'g' },
    { id: 'c', method: 'POST', url: 'Countries', body: { Name: 'Clusterland', IsoCode: 'CL' }, atomicityGroup: 'g' },
  ]);
  t.deepEqual(
    responses.map((r) => r.status),
    [201, 201, 201],
  );
  const batched = createdId(responses[0]!);
  t.is((await read<{ Name: string }>(stack, `/Companies/${batched}`)).Name, 'Batched Shard One');
});

test.serial('events reach the search index and /Activities', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Hashtagged Quarry' });
  const found = await eventually(async () => {
    const res = await stack.get(`/Companies?$search=hashtagged`);
    const rows = res.body as { Id: string }[];
    return rows.length ? rows : undefined;
  });
  t.deepEqual(
    found.map((row) => row.Id),
    [id],
  );
  const activities = await eventually(async () => {
    const res = await stack.get(`/Activities?$filter=${encodeURIComponent(`EntityId eq '${id}'`)}`);
    const rows = res.body as { EventType: string }[];
    return rows.length ? rows : undefined;
  });
  t.deepEqual(
    activities.map((a) => a.EventType),
    ['CompanyCreated'],
  );
});

test.serial('/Jobs lists the jobs of every queue and Bull Board lists the queues', async (t) => {
  await checkQueuesListed(t, stack);
});

test.serial("each queue's keys are on one node, and the queues on more than one", async (t) => {
  const nodesOf = new Map<QueueName, Set<number>>(ALL_QUEUES.map((name) => [name, new Set()]));
  const keysOf = new Map<QueueName, number>(ALL_QUEUES.map((name) => [name, 0]));
  for (const port of cluster.ports) {
    const keys = (await cluster.cli(port, '--scan', '--pattern', `*${prefix}*`)).split('\n').filter(Boolean);
    for (const name of ALL_QUEUES) {
      const own = keys.filter((key) => key.startsWith(`${queuePrefix(stack.config, name)}:`));
      if (own.length) nodesOf.get(name)!.add(port);
      keysOf.set(name, keysOf.get(name)! + own.length);
    }
  }
  const owners = await slotOwners();
  for (const name of ALL_QUEUES) {
    t.true(keysOf.get(name)! > 0, `${name} has keys`);
    t.deepEqual([...nodesOf.get(name)!], [await ownerOf(`{${prefix}:${name}}`, owners)], `${name} on one node`);
  }
  const used = new Set([...nodesOf.values()].flatMap((nodes) => [...nodes]));
  t.true(used.size > 1, 'the queues are spread over the primaries');
});

test.serial('the rate limit and the pending-command admission count on the cluster', async (t) => {
  const limited = await startStack({
    workers: [],
    env: {
      REDIS_CLUSTER_NODES: cluster.seeds,
      MAX_PENDING_COMMANDS_PER_SUBJECT: '2',
      RATE_LIMIT_PER_MINUTE: '6',
      COMMAND_TIMEOUT_MS: '200',
    },
  });
  t.teardown(() => limited.close());
  // No worker runs: each write stays queued (202) and counts against the subject.
  for (let i = 0; i < 2; i++)
    t.is((await limited.request('POST', '/Companies', { body: { Name: `Waiting ${i}` } })).status, 202);
  const over = await limited.request('POST', '/Companies', { body: { Name: 'Waiting 2' } });
  t.is(over.status, 429, over.text);
  t.regex((over.body as { detail: string }).detail, /MAX_PENDING_COMMANDS_PER_SUBJECT/);
  // Requests 4 to 6 of the minute pass; the 7th is over RATE_LIMIT_PER_MINUTE.
  for (let i = 0; i < 3; i++) t.is((await limited.get('/Companies?$top=1')).status, 200);
  const limitedRead = await limited.get('/Companies?$top=1');
  t.is(limitedRead.status, 429, limitedRead.text);
  t.regex((limitedRead.body as { detail: string }).detail, /RATE_LIMIT_PER_MINUTE/);
});

test.serial(
  'worker processes of every kind run on the cluster from REDIS_CLUSTER_NODES and stop cleanly',
  async (t) => {
    const bare = await startStack({ workers: [], env: { REDIS_CLUSTER_NODES: cluster.seeds } });
    t.teardown(() => bare.close());
    const workers = spawnWorkerProcesses(workerProcessEnv(bare));
    t.teardown(() => workers.kill());
    t.is(workerProcessEnv(bare).REDIS_CLUSTER_NODES, cluster.seeds);
    t.is(workerProcessEnv(bare).REDIS_URL, undefined);

    const id = await create(bare, 'Companies', { Name: 'Processed Shardworks' });
    await eventually(
      async () => ((await bare.get('/Companies?$search=shardworks')).body as unknown[]).length === 1,
      20_000,
    );
    await eventually(async () => {
      const res = await bare.get(`/Activities?$filter=${encodeURIComponent(`EntityId eq '${id}'`)}`);
      return (res.body as unknown[]).length === 1;
    }, 20_000);

    t.deepEqual(await workers.stop(), [0, 0, 0], 'each process closes its cluster connections and exits');
  },
);

test.serial(
  'the primary of the commands queue down: writes are 503s with Retry-After; back, writes go on',
  async (t) => {
    const port = await ownerOf(`{${prefix}:${QUEUE.commands}}`, await slotOwners());
    await cluster.stopNode(port);
    try {
      const res = await stack.request('POST', '/Companies', { body: { Name: 'During the outage' } });
      t.is(res.status, 503, res.text);
      t.truthy(res.headers.get('retry-after'));
      t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    } finally {
      await cluster.restartNode(port);
    }
    await eventually(
      async () => (await stack.request('POST', '/Companies', { body: { Name: 'After the outage' } })).status === 201,
      30_000,
    );
    t.pass();
  },
);
