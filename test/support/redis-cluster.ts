import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A real three-primary Redis Cluster for a test file (DESIGN §14): three `redis-server
 * --cluster-enabled yes` on ports of their own in a temporary directory, joined with
 * `redis-cli --cluster create --cluster-replicas 0`, torn down by `stop()`. The ports are free
 * ones (each with its cluster bus port, +10000, free too) unless TEST_REDIS_CLUSTER_PORT names the
 * first of three consecutive ports.
 */
export interface RedisCluster {
  ports: number[];
  /** REDIS_CLUSTER_NODES for the service: every node as a seed. */
  seeds: string;
  /** Runs a redis-cli command on one node and returns its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** Stops one node (its slots go unserved: the cluster has no replicas). */
  stopNode(port: number): Promise<void>;
  /** Starts a stopped node again (empty: no persistence) and waits until the cluster is ok. */
  restartNode(port: number): Promise<void>;
  stop(): Promise<void>;
}

const NODES = 3;

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Ports whose cluster bus ports (+10000) are free as well. */
async function clusterPorts(): Promise<number[]> {
  const first = Number(process.env.TEST_REDIS_CLUSTER_PORT ?? 0);
  if (first) return Array.from({ length: NODES }, (_, i) => first + i);
  const ports: number[] = [];
  while (ports.length < NODES) {
    const port = await freePort();
    if (port + 10000 < 65536 && !ports.includes(port) && (await portFree(port + 10000))) ports.push(port);
  }
  return ports;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout;
}

/** Polls `check` until it holds, failing after `timeoutMs` (starting servers, not a timing test). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis cluster: ${what} not reached in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = await mkdtemp(path.join(tmpdir(), 'emapi-redis-cluster-'));
  const ports = await clusterPorts();
  const servers = new Map<number, ChildProcess>();
  /** Starts (or starts again, with its nodes.conf: same id and slots) the node on `port`. */
  const startNode = async (port: number) => {
    const nodeDir = path.join(dir, String(port));
    const server = spawn(
      'redis-server',
      [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--dir', nodeDir,
        '--cluster-enabled', 'yes',
        '--cluster-config-file', 'nodes.conf',
        '--cluster-node-timeout', '5000',
        '--save', '',
        '--appendonly', 'no',
        '--maxmemory-policy', 'noeviction',
        '--logfile', path.join(nodeDir, 'redis.log'),
      ], // prettier-ignore
      { stdio: 'ignore' },
    );
    servers.set(port, server);
    await until(`node ${port} answering`, async () => (await cli(port, 'ping')).trim() === 'PONG');
  };
  const stopNode = (port: number) =>
    new Promise<void>((resolve) => {
      const server = servers.get(port);
      if (!server || server.exitCode !== null || server.signalCode !== null) return resolve();
      server.once('exit', () => resolve());
      server.kill('SIGTERM');
    });
  const clusterOk = async () => {
    for (const port of ports) {
      await until(`node ${port} cluster_state:ok`, async () => {
        const info = await cli(port, 'cluster', 'info');
        return /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info);
      });
    }
  };
  // A test process that ends without stop() (a failed hook, a timeout) still takes its servers along.
  const onExit = () => {
    for (const server of servers.values()) if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const stop = async () => {
    process.off('exit', onExit);
    await Promise.all(ports.map(stopNode));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      await mkdir(path.join(dir, String(port)));
      await startNode(port);
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    // Every node must see all slots served before a client asks it for the slot map.
    await clusterOk();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ports,
    seeds: ports.map((port) => `127.0.0.1:${port}`).join(','),
    cli,
    stopNode,
    async restartNode(port) {
      await startNode(port);
      await clusterOk();
    },
    stop,
  };
}
