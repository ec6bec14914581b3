import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Real Redis behind Sentinel for a test file (DESIGN §14): a primary, one replica
 * (`--replicaof`) and three `redis-server --sentinel` processes with a config file each,
 * monitoring the primary under `name` with a quorum of 2, in a temporary directory, torn down by
 * `stop()` (or when the test process exits). The ports are free ones.
 */
export interface RedisSentinel {
  name: string;
  /** REDIS_SENTINELS for the service. */
  sentinels: string;
  /** The port of the primary the sentinels name now. */
  primaryPort(): Promise<number>;
  /**
   * SIGKILLs the current primary (no shutdown, no save) and, in the same turn, SIGSTOPs its
   * replica: no failover can complete (the sentinels find no replica to promote) until `release`
   * SIGCONTs it. The replica has everything the primary sent it until the kill.
   */
  killPrimary(): Promise<{ port: number; release: () => void }>;
  /**
   * SIGSTOPs the current primary's replica and drops its replication link on the primary's side:
   * the primary keeps serving, but nothing it writes from now on reaches the replica (WAIT 1 times
   * out; a stopped replica alone would still find the stream in its socket buffer) until `release`
   * SIGCONTs it and it reconnects — to this primary, if it is still alive.
   */
  holdReplica(): Promise<{ release: () => void }>;
  /** Waits until the sentinels name a primary other than `port` and it answers as a master. */
  failedOverFrom(port: number): Promise<number>;
  stop(): Promise<void>;
}

const SENTINELS = 3;

async function freePort(taken: number[]): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    if (!taken.includes(port)) return port;
  }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout;
}

/** Polls `check` until it holds, failing after `timeoutMs` (starting servers, not a timing test). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis sentinel: ${what} not reached in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRedisSentinel(name = 'emapi-primary'): Promise<RedisSentinel> {
  const dir = await mkdtemp(path.join(tmpdir(), 'emapi-redis-sentinel-'));
  const ports: number[] = [];
  for (let i = 0; i < 2 + SENTINELS; i++) ports.push(await freePort(ports));
  const [primary, replica, ...sentinelPorts] = ports as [number, number, ...number[]];
  const servers = new Map<number, ChildProcess>();
  const serve = (port: number, args: string[]) => {
    servers.set(port, spawn('redis-server', args, { stdio: 'ignore' }));
  };
  const dataArgs = (port: number) =>
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--dir', dir,
      '--save', '',
      '--appendonly', 'no',
      '--maxmemory-policy', 'noeviction',
      '--logfile', path.join(dir, `redis-${port}.log`),
    ]; // prettier-ignore
  const onExit = () => {
    for (const server of servers.values()) if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const stopServer = (port: number) =>
    new Promise<void>((resolve) => {
      const server = servers.get(port);
      if (!server || server.exitCode !== null || server.signalCode !== null) return resolve();
      server.once('exit', () => resolve());
      server.kill('SIGKILL');
    });
  const stop = async () => {
    process.off('exit', onExit);
    await Promise.all(ports.map(stopServer));
    await rm(dir, { recursive: true, force: true });
  };
  const primaryPort = async () => {
    const answer = (await cli(sentinelPorts[0]!, 'sentinel', 'get-master-addr-by-name', name)).trim().split('\n');
    return Number(answer[1]);
  };
  try {
    serve(primary, dataArgs(primary));
    await until(`primary ${primary} answering`, async () => (await cli(primary, 'ping')).trim() === 'PONG');
    serve(replica, [...dataArgs(replica), '--replicaof', '127.0.0.1', String(primary)]);
    await until('the replica in sync', async () =>
      /master_link_status:up/.test(await cli(replica, 'info', 'replication')),
    );
    for (const port of sentinelPorts) {
      const conf = path.join(dir, `sentinel-${port}.conf`);
      await writeFile(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `logfile ${path.join(dir, `sentinel-${port}.log`)}`,
          `sentinel monitor ${name} 127.0.0.1 ${primary} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      serve(port, [conf, '--sentinel']);
    }
    // Every sentinel knows the replica and the other sentinels before anything fails.
    for (const port of sentinelPorts) {
      await until(`sentinel ${port} seeing the replica and its peers`, async () => {
        const info = await cli(port, 'info', 'sentinel');
        return new RegExp(`name=${name},status=ok,address=127.0.0.1:${primary},slaves=1,sentinels=${SENTINELS}`).test(
          info,
        );
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    name,
    sentinels: sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
    primaryPort,
    async holdReplica() {
      const port = await primaryPort();
      const held = [primary, replica].filter((other) => other !== port).map((other) => servers.get(other)!);
      for (const server of held) server.kill('SIGSTOP');
      await cli(port, 'client', 'kill', 'type', 'replica');
      return {
        release: () => {
          for (const server of held) if (server.exitCode === null) server.kill('SIGCONT');
        },
      };
    },
    async killPrimary() {
      const port = await primaryPort();
      const dying = servers.get(port)!;
      const exited = new Promise((resolve) => dying.once('exit', resolve));
      const replicas = [primary, replica].filter((other) => other !== port).map((other) => servers.get(other)!);
      dying.kill('SIGKILL');
      for (const server of replicas) server.kill('SIGSTOP');
      await exited;
      return {
        port,
        release: () => {
          for (const server of replicas) if (server.exitCode === null) server.kill('SIGCONT');
        },
      };
    },
    async failedOverFrom(port) {
      let promoted = 0;
      // A failover the sentinels had to abort (no replica to promote) is tried again after
      // 2 × failover-timeout.
      await until(
        'a failover',
        async () => {
          promoted = await primaryPort();
          if (promoted === port) return false;
          return /role:master/.test(await cli(promoted, 'info', 'replication'));
        },
        120_000,
      );
      return promoted;
    },
    stop,
  };
}
