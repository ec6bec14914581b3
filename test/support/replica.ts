import { execFile } from 'node:child_process';
import { appendFile, chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * A real hot standby of the test PostgreSQL server, made the way operators make one
 * (`pg_basebackup -R`: a copy of the primary that streams its WAL), on a port of its own, with its
 * replay delay and its life in the test's hands. Never a mock: the service reads from it for real.
 */

const run = promisify(execFile);

export interface TestReplica {
  /** The same database as `primaryDatabaseUrl`, on the replica. */
  urlFor(primaryDatabaseUrl: string): string;
  /**
   * `recovery_min_apply_delay`, written to the replica's configuration and reloaded: commits are
   * replayed this long after they happened on the primary (read at start too).
   */
  setApplyDelay(ms: number): Promise<void>;
  /** Stops replaying WAL (it still receives it) until `resumeReplay`; returns once paused. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

function bin(name: string): string {
  return process.env.TEST_PG_BIN ? path.join(process.env.TEST_PG_BIN, name) : name;
}

/** As root, PostgreSQL tools run as the postgres user (the data directory is theirs). */
async function asPostgres(command: string, args: string[]): Promise<void> {
  const root = process.getuid?.() === 0;
  await run(root ? 'runuser' : command, root ? ['-u', 'postgres', '--', command, ...args] : args, { cwd: '/' });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ReplicaOptions {
  /** The primary to copy; default the test server (TEST_TEMPLATE_DATABASE_URL, else DATABASE_URL). */
  primaryUrl?: string;
  /**
   * More server settings, written after the defaults (so they win): the benchmark gives the replica
   * the primary's shared_buffers and loads pg_stat_statements to count what it serves.
   */
  settings?: Record<string, string>;
}

export async function startReplica(options: ReplicaOptions = {}): Promise<TestReplica> {
  const primary = new URL(
    options.primaryUrl ?? process.env.TEST_TEMPLATE_DATABASE_URL ?? process.env.DATABASE_URL ?? '',
  );
  if (!primary.port) throw new Error('no test PostgreSQL: run the suite with `npm test`');
  const dir = await mkdtemp('/var/tmp/emapi-replica-');
  const data = path.join(dir, 'data');
  const port = await freePort();
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const user = primary.username || 'postgres';
  // -R writes primary_conninfo and standby.signal: the copy starts as a streaming standby.
  await asPostgres(bin('pg_basebackup'), [
    '-h',
    primary.hostname,
    '-p',
    primary.port,
    '-U',
    user,
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
  ]);
  const conf = path.join(data, 'postgresql.auto.conf');
  // A standby needs at least the primary's max_connections (the test server runs with 300).
  await appendFile(
    conf,
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nmax_connections = 300\nshared_buffers = '32MB'\nhot_standby = on\nfsync = off\n` +
      Object.entries(options.settings ?? {})
        .map(([name, value]) => `${name} = '${value}'\n`)
        .join(''),
  );
  const ctl = (...args: string[]) => asPostgres(bin('pg_ctl'), ['-D', data, ...args]);
  const start = () => ctl('-w', '-t', '60', '-l', path.join(dir, 'log'), 'start');
  const sql = async (text: string) => {
    const { stdout } = await run(bin('psql'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-U',
      user,
      '-Atqc',
      text,
      'postgres',
    ]);
    return stdout.trim();
  };
  await start();
  return {
    urlFor(primaryDatabaseUrl) {
      const url = new URL(primaryDatabaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    async setApplyDelay(ms) {
      await appendFile(conf, `recovery_min_apply_delay = '${Math.floor(ms)}ms'\n`);
      await ctl('reload');
    },
    async pauseReplay() {
      await sql('select pg_wal_replay_pause()');
      for (;;) {
        if ((await sql('select pg_get_wal_replay_pause_state()')) === 'paused') return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async resumeReplay() {
      await sql('select pg_wal_replay_resume()');
    },
    stop: () => ctl('-m', 'immediate', '-w', 'stop'),
    start,
    async destroy() {
      await ctl('-m', 'immediate', '-w', 'stop').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
