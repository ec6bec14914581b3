import type autocannon from 'autocannon';
import { KINDS, LABELS, autocannonRun, eventsDrained, stopAll, until } from './bench-runs';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { createKnex } from '../db/knex';
import { walPositionNow } from '../db/replicas/wal-position';
import { nodeArgsOf, type ProcessKind } from '../scripts/process-commands';
import { startReplica, type TestReplica } from '../test/support/replica';
import { cpuMsOfPids, cpuWindow, type CpuPerRequest, type TrackedProcess } from './process-cpu';

/**
 * `BENCH_ONLY=replica npm run bench` (DESIGN §14, issue 15): reads on a real streaming replica.
 * A hot standby of the bench's Postgres is made the way operators make one (`pg_basebackup -R`,
 * test/support/replica.ts) on a port of its own, with the primary's shared_buffers. Then, in
 * turn and BENCH_REPLICA_ROUNDS times, the API and the three workers are started as `npm start`
 * runs them (queue prefix of their own) without replicas and with `DATABASE_REPLICA_URLS` naming
 * the standby, and each time the same load is sent:
 *
 * - keyed GET (c=1, c=32) and the `$top=60` + nested `$expand` list (c=32): req/s and latency, the
 *   transactions and rows each server served (pg_stat_database deltas) and the CPU of each server's
 *   backends per read (/proc);
 * - POST (c=1, c=32): with replicas every write answer also reads `pg_current_wal_lsn()` for its
 *   `X-Consistency-Token`; CPU per write of every process and of both servers, to the events handled;
 * - read after write: BENCH_REPLICA_RAW_CONCURRENCY clients each POST a Scheme and GET it at once,
 *   sending the answer's token back (and, with replicas, once without it: how often that read is
 *   stale). Which server served the GETs is counted on the replica by pg_stat_statements (calls of
 *   the keyed read, and of the "has it replayed that far" poll a read with a token makes while it waits).
 *
 * Both servers share this machine's cores, so the replica's reads are not extra capacity here: the
 * figures show where the load goes and what the token costs, not a speed-up.
 */

const PREFIX = 'bench-replica';
const PORT = Number(process.env.BENCH_REPLICA_API_PORT ?? 3907);
const ROUNDS = Number(process.env.BENCH_REPLICA_ROUNDS ?? 2);
const RAW_CONCURRENCY = Number(process.env.BENCH_REPLICA_RAW_CONCURRENCY ?? 16);
/**
 * The replica's `recovery_min_apply_delay` in the read-after-write runs: none (a replica on this
 * machine replays within a millisecond), one within REPLICA_WAIT_MS (a replica a little behind, as
 * one on another machine or under load is) and one past it (a replica far behind).
 */
const APPLY_DELAYS_MS = (process.env.BENCH_REPLICA_APPLY_DELAYS_MS ?? '0,100,1000').split(',').map(Number);
const PRIMARY = 'Postgres primary';
const REPLICA = 'Postgres replica';

export interface ReplicaBenchOptions {
  /** The service's environment (stores, signing key, auth, log level). */
  env: Record<string, string>;
  databaseUrl: string;
  redisUrl: string;
  /** Scheme keys to read (database id → encoded key). */
  keys: number[];
  encoded: Map<number, string>;
  listPath: string;
  durationSeconds: number;
  warmupSeconds: number;
  warmupRequests: number;
}

type Mode = 'primary only' | 'with replica';

interface ServerCounts {
  xacts: number;
  tuples: number;
}

export interface ReplicaReadRun {
  round: number;
  mode: Mode;
  scenario: string;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** pg_stat_database deltas over the measured run, per second (xact_commit, tup_returned). */
  primary: ServerCounts;
  replica: ServerCounts;
  /** Share of the run's transactions committed on the replica. */
  replicaShare: number;
  cpu: CpuPerRequest;
  loadAverage: number[];
}

export interface ReplicaWriteRun {
  round: number;
  mode: Mode;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpu: CpuPerRequest;
  loadAverage: number[];
}

export interface ReadAfterWriteRun {
  round: number;
  mode: Mode;
  /** The GET sent the POST's X-Consistency-Token back (none is issued without replicas). */
  token: boolean;
  /** The replica's recovery_min_apply_delay during the run. */
  applyDelayMs: number;
  pairs: number;
  pairsPerSecond: number;
  post: { p50: number; p99: number };
  get: { p50: number; p99: number; mean: number };
  /** GETs that answered 404: served by a server that had not replayed the POST yet. */
  stale: number;
  errors: number;
  /** Keyed reads the replica ran (pg_stat_statements); the rest of the GETs ran on the primary. */
  servedByReplica: number | null;
  servedByPrimary: number | null;
  /** "Has it replayed that far?" polls of waiting reads, on the replica. */
  waitPolls: number | null;
  loadAverage: number[];
}

/** The token's statement alone, as the API runs it (a knex pool on the primary), one call after another. */
export interface TokenStatementRun {
  round: number;
  calls: number;
  /** Wall time per call, ms. */
  p50: number;
  p99: number;
  /** CPU per call, ms: this (client) process, and the Postgres backend that answered. */
  clientCpuMs: number;
  backendCpuMs: number;
  loadAverage: number[];
}

export interface ReplicaReport {
  reads: ReplicaReadRun[];
  writes: ReplicaWriteRun[];
  readAfterWrite: ReadAfterWriteRun[];
  tokenStatement: TokenStatementRun[];
}

/** The postmaster of a local server: the parent of a backend. */
async function postmasterOf(db: pg.Pool): Promise<number> {
  const backend = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const stat = readFileSync(`/proc/${backend}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

async function countsOf(db: pg.Pool): Promise<ServerCounts> {
  const { rows } = await db.query<{ xacts: string; tuples: string }>(
    'select xact_commit as xacts, tup_returned as tuples from pg_stat_database where datname = current_database()',
  );
  return { xacts: Number(rows[0]!.xacts), tuples: Number(rows[0]!.tuples) };
}

/** What the replica's statements were called since the last reset, by kind. */
async function replicaStatements(replica: pg.Pool): Promise<{ keyedReads: number; waitPolls: number }> {
  const { rows } = await replica.query<{ query: string; calls: string }>(
    `select query, calls from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())`,
  );
  let keyedReads = 0;
  let waitPolls = 0;
  for (const row of rows) {
    // The keyed read of a Scheme (db/query/entity-reader.ts keyedSql): `… from schemes d where d.id = $1`.
    if (/from schemes d where d\.id = \$1/.test(row.query)) keyedReads += Number(row.calls);
    if (/as replay_now/.test(row.query)) waitPolls += Number(row.calls);
  }
  return { keyedReads, waitPolls };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2));
}

const loadAverage = () => os.loadavg().map((n) => Number(n.toFixed(1)));

export async function replicaBench(options: ReplicaBenchOptions): Promise<ReplicaReport> {
  const primaryDb = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  // Counts what the replica serves: loaded there only (the primary runs as the bench provisioned it).
  await primaryDb.query('create extension if not exists pg_stat_statements');
  console.error('  making a streaming replica of the bench database (pg_basebackup -R)…');
  const shared = (await primaryDb.query<{ v: string }>("select current_setting('shared_buffers') as v")).rows[0]!.v;
  const standby: TestReplica = await startReplica({
    primaryUrl: options.databaseUrl,
    settings: { shared_buffers: shared, shared_preload_libraries: 'pg_stat_statements' },
  });
  const replicaUrl = standby.urlFor(options.databaseUrl);
  const replicaDb = new pg.Pool({ connectionString: replicaUrl, max: 2 });
  const report: ReplicaReport = { reads: [], writes: [], readAfterWrite: [], tokenStatement: [] };
  try {
    await until(async () => {
      const at = (await primaryDb.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
      const { rows } = await replicaDb.query<{ ok: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok', [
        at,
      ]);
      return rows[0]!.ok;
    }, 'the replica caught up');
    const servers: TrackedProcess[] = [
      { label: PRIMARY, pid: await postmasterOf(primaryDb), withDescendants: true },
      { label: REPLICA, pid: await postmasterOf(replicaDb), withDescendants: true },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of ['primary only', 'with replica'] as Mode[]) {
        console.error(`  replica bench round ${round}, ${mode}…`);
        await measureMode(options, round, mode, { standby, primaryDb, replicaDb, replicaUrl, servers }, report);
      }
      report.tokenStatement.push({ round, ...(await tokenStatement(options.databaseUrl)), loadAverage: loadAverage() });
      const t = report.tokenStatement.at(-1)!;
      console.error(
        `    the token's statement alone: p50 ${t.p50} ms p99 ${t.p99} ms, CPU ${t.clientCpuMs} ms client + ${t.backendCpuMs} ms Postgres per call`,
      );
    }
  } finally {
    await replicaDb.end();
    await primaryDb.end();
    await standby.destroy();
  }
  printReplicaReport(report);
  return report;
}

interface Servers {
  standby: TestReplica;
  primaryDb: pg.Pool;
  replicaDb: pg.Pool;
  replicaUrl: string;
  servers: TrackedProcess[];
}

async function measureMode(
  options: ReplicaBenchOptions,
  round: number,
  mode: Mode,
  { standby, primaryDb, replicaDb, replicaUrl, servers }: Servers,
  report: ReplicaReport,
): Promise<void> {
  const children: ChildProcess[] = [];
  const env: Record<string, string> = {
    ...options.env,
    QUEUE_PREFIX: PREFIX,
    DATABASE_REPLICA_URLS: mode === 'with replica' ? replicaUrl : '',
  };
  const pids = new Map<ProcessKind, number>();
  for (const kind of KINDS) {
    const child = spawn(process.execPath, nodeArgsOf(kind), {
      env: { ...process.env, ...env, ...(kind === 'api' ? { PORT: String(PORT) } : {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.resume();
    children.push(child);
    pids.set(kind, child.pid!);
  }
  const service = `http://127.0.0.1:${PORT}`;
  try {
    await until(async () => {
      const res = await fetch(`${service}/health/ready`);
      if (!res.ok) return false;
      if (mode === 'primary only') return true;
      const body = (await res.json()) as { replicas?: { state: string; lagMs: number | null }[] };
      return body.replicas?.[0]?.state === 'up' && typeof body.replicas[0].lagMs === 'number';
    }, 'the API ready (and its replica up)');
    const api: TrackedProcess = { label: 'API', pid: pids.get('api')!, withDescendants: true };

    // Reads: the same load with and without the replica.
    let i = 0;
    const keyed = (): autocannon.Request[] => [
      {
        setupRequest: (req: autocannon.Request) => {
          i = (i + 1) % options.keys.length;
          return { ...req, path: `/Schemes/${options.encoded.get(options.keys[i]!)}` };
        },
      } as autocannon.Request,
    ];
    for (const [scenario, concurrency] of [
      ['keyed GET', 1],
      ['keyed GET', 32],
      ['list $top=60 + nested $expand', 32],
    ] as const) {
      const opts: autocannon.Options =
        scenario === 'keyed GET'
          ? { url: service, connections: concurrency, requests: keyed() }
          : { url: `${service}${options.listPath}`, connections: concurrency };
      await autocannonRun({ ...opts, duration: options.warmupSeconds });
      const before = await Promise.all([countsOf(primaryDb), countsOf(replicaDb)]);
      const window = cpuWindow([api, ...servers]);
      const result = await autocannonRun({ ...opts, duration: options.durationSeconds });
      const cpu = window(result.requests.total);
      const after = await Promise.all([countsOf(primaryDb), countsOf(replicaDb)]);
      const seconds = cpu.seconds;
      const delta = (k: 0 | 1): ServerCounts => ({
        xacts: Math.round((after[k].xacts - before[k].xacts) / seconds),
        tuples: Math.round((after[k].tuples - before[k].tuples) / seconds),
      });
      const primary = delta(0);
      const replica = delta(1);
      report.reads.push({
        round,
        mode,
        scenario,
        concurrency,
        rps: Math.round(result.requests.average),
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.timeouts + result.non2xx,
        primary,
        replica,
        replicaShare: Number((replica.xacts / Math.max(1, primary.xacts + replica.xacts)).toFixed(3)),
        cpu,
        loadAverage: loadAverage(),
      });
      logLast(report.reads.at(-1)!);
    }

    // Writes: with replicas each answer also asks the primary for its WAL position.
    const post = {
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ SchemeName: 'Replica bench [<id>]' }),
      idReplacement: true,
    };
    await autocannonRun({ url: `${service}/Schemes`, connections: 16, amount: options.warmupRequests, ...post });
    await eventsDrained(options.redisUrl, PREFIX);
    for (const concurrency of [1, 32]) {
      const window = cpuWindow([
        ...KINDS.map((kind) => ({ label: LABELS[kind], pid: pids.get(kind)!, withDescendants: true })),
        ...servers,
      ]);
      const result = await autocannonRun({
        url: `${service}/Schemes`,
        connections: concurrency,
        duration: options.durationSeconds,
        ...post,
      });
      await eventsDrained(options.redisUrl, PREFIX);
      const cpu = window(result.requests.total);
      report.writes.push({
        round,
        mode,
        concurrency,
        rps: Math.round(result.requests.average),
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.timeouts + result.non2xx,
        cpu,
        loadAverage: loadAverage(),
      });
      const w = report.writes.at(-1)!;
      console.error(
        `    POST c=${concurrency}: ${w.rps} req/s p50 ${w.p50} ms p99 ${w.p99} ms errors ${w.errors}, CPU ${w.cpu.total} ms/write`,
      );
    }

    // Read after write: POST, then GET what it made at once.
    const variants =
      mode === 'with replica'
        ? APPLY_DELAYS_MS.flatMap((delay) => [true, false].map((token) => ({ delay, token })))
        : [{ delay: 0, token: false }];
    // The first loop of a process runs cold (the bench's own client included): unmeasured first.
    await readAfterWrite(service, false, options.warmupSeconds);
    for (const { delay, token } of variants) {
      await eventsDrained(options.redisUrl, PREFIX);
      if (mode === 'with replica') {
        await applyDelay(standby, primaryDb, replicaDb, delay);
        await replicaDb.query('select pg_stat_statements_reset()');
      }
      const run = await readAfterWrite(service, token, options.durationSeconds);
      const counted = mode === 'with replica' ? await replicaStatements(replicaDb) : undefined;
      report.readAfterWrite.push({
        round,
        mode,
        token,
        applyDelayMs: delay,
        ...run,
        servedByReplica: counted ? counted.keyedReads : 0,
        servedByPrimary: counted ? Math.max(0, run.pairs - counted.keyedReads) : run.pairs,
        waitPolls: counted ? counted.waitPolls : 0,
        loadAverage: loadAverage(),
      });
      const r = report.readAfterWrite.at(-1)!;
      console.error(
        `    POST then GET, ${token ? 'with' : 'without'} the token, apply delay ${delay} ms: ${r.pairsPerSecond} pairs/s, GET p50 ${r.get.p50} ms p99 ${r.get.p99} ms, ` +
          `stale ${r.stale}, served by replica ${r.servedByReplica} / primary ${r.servedByPrimary}, polls ${r.waitPolls}`,
      );
    }
    if (mode === 'with replica') await applyDelay(standby, primaryDb, replicaDb, 0);
  } finally {
    await stopAll(children);
  }
}

const TOKEN_CALLS = 3000;

/** `walPositionNow` (what each write answer runs with replicas) TOKEN_CALLS times on one pooled connection. */
async function tokenStatement(databaseUrl: string): Promise<Omit<TokenStatementRun, 'round' | 'loadAverage'>> {
  const knex = createKnex(databaseUrl, 1);
  try {
    const backend = (await knex.raw<{ rows: { pid: number }[] }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    for (let i = 0; i < 300; i++) await walPositionNow(knex); // warm
    const backendBefore = cpuMsOfPids([backend]).get(backend)!;
    const clientBefore = process.cpuUsage();
    const times: number[] = [];
    for (let i = 0; i < TOKEN_CALLS; i++) {
      const t0 = performance.now();
      await walPositionNow(knex);
      times.push(performance.now() - t0);
    }
    const client = process.cpuUsage(clientBefore);
    const backendCpu = cpuMsOfPids([backend]).get(backend)! - backendBefore;
    times.sort((a, b) => a - b);
    return {
      calls: TOKEN_CALLS,
      p50: Number(percentile(times, 50).toFixed(2)),
      p99: Number(percentile(times, 99).toFixed(2)),
      clientCpuMs: Number(((client.user + client.system) / 1000 / TOKEN_CALLS).toFixed(3)),
      backendCpuMs: Number((backendCpu / TOKEN_CALLS).toFixed(3)),
    };
  } finally {
    await knex.destroy();
  }
}

/** Sets the replica's replay delay; back to none, waits until it has replayed what the primary wrote. */
async function applyDelay(standby: TestReplica, primaryDb: pg.Pool, replicaDb: pg.Pool, ms: number): Promise<void> {
  await standby.setApplyDelay(ms);
  if (ms > 0) {
    await new Promise((r) => setTimeout(r, 1000)); // the reload reaches the startup process
    return;
  }
  const at = (await primaryDb.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
  await until(
    async () =>
      (await replicaDb.query<{ ok: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok', [at])).rows[0]!.ok,
    'the replica caught up',
  );
}

/** RAW_CONCURRENCY clients, each POSTing a Scheme then GETting it, for `seconds`. */
async function readAfterWrite(
  service: string,
  token: boolean,
  seconds: number,
): Promise<
  Omit<
    ReadAfterWriteRun,
    'round' | 'mode' | 'token' | 'applyDelayMs' | 'servedByReplica' | 'servedByPrimary' | 'waitPolls' | 'loadAverage'
  >
> {
  const posts: number[] = [];
  const gets: number[] = [];
  let stale = 0;
  let errors = 0;
  const started = Date.now();
  const deadline = started + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: RAW_CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        const t0 = performance.now();
        const created = await fetch(`${service}/Schemes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', prefer: 'return=minimal' },
          body: JSON.stringify({ SchemeName: `Read after write ${n++}` }),
        });
        await created.arrayBuffer();
        const t1 = performance.now();
        const location = created.headers.get('location');
        const consistency = created.headers.get('x-consistency-token');
        if (created.status !== 201 || !location) {
          errors++;
          continue;
        }
        posts.push(t1 - t0);
        const read = await fetch(`${service}${location}`, {
          headers: token && consistency ? { 'x-consistency-token': consistency } : {},
        });
        await read.arrayBuffer();
        gets.push(performance.now() - t1);
        if (read.status === 404) stale++;
        else if (read.status !== 200) errors++;
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  posts.sort((a, b) => a - b);
  gets.sort((a, b) => a - b);
  return {
    pairs: gets.length,
    pairsPerSecond: Math.round(gets.length / elapsed),
    post: { p50: percentile(posts, 50), p99: percentile(posts, 99) },
    get: {
      p50: percentile(gets, 50),
      p99: percentile(gets, 99),
      mean: Number((gets.reduce((a, b) => a + b, 0) / Math.max(1, gets.length)).toFixed(2)),
    },
    stale,
    errors,
  };
}

function logLast(r: ReplicaReadRun): void {
  console.error(
    `    ${r.scenario} c=${r.concurrency}: ${r.rps} req/s p50 ${r.p50} ms p99 ${r.p99} ms errors ${r.errors}; ` +
      `xacts/s primary ${r.primary.xacts} replica ${r.replica.xacts}; CPU ms/read API ${r.cpu.perProcess.API} primary ${r.cpu.perProcess[PRIMARY]} replica ${r.cpu.perProcess[REPLICA]}`,
  );
}

function printReplicaReport(report: ReplicaReport): void {
  const ms = (v: number | null | undefined) => (v == null ? '—' : v.toFixed(2));
  console.log('\nRead replicas: reads with and without a streaming replica (same machine, same load)\n');
  console.log(
    '| round | mode | scenario | c | req/s | p50 ms | p99 ms | errors | primary xact/s | replica xact/s | on replica | primary rows/s | replica rows/s | CPU ms/read: API | primary | replica | load avg |',
  );
  console.log(
    '| --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --- |',
  );
  for (const r of report.reads) {
    console.log(
      `| ${r.round} | ${r.mode} | ${r.scenario} | ${r.concurrency} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.primary.xacts} | ${r.replica.xacts} | ${(r.replicaShare * 100).toFixed(0)} % | ${r.primary.tuples} | ${r.replica.tuples} | ${ms(r.cpu.perProcess.API)} | ${ms(r.cpu.perProcess[PRIMARY])} | ${ms(r.cpu.perProcess[REPLICA])} | ${r.loadAverage.join(' ')} |`,
    );
  }
  const labels = [...KINDS.map((k) => LABELS[k]), PRIMARY, REPLICA];
  console.log('\nWrites (POST minimal): with a replica each answer also reads pg_current_wal_lsn() for its token\n');
  console.log(
    `| round | mode | c | req/s | p50 ms | p99 ms | errors | ${labels.join(' | ')} | total CPU ms/write | load avg |`,
  );
  console.log(`| --- | --- | --: | --: | --: | --: | --: | ${labels.map(() => '--:').join(' | ')} | --: | --- |`);
  for (const w of report.writes) {
    console.log(
      `| ${w.round} | ${w.mode} | ${w.concurrency} | ${w.rps} | ${w.p50} | ${w.p99} | ${w.errors} | ${labels.map((l) => ms(w.cpu.perProcess[l])).join(' | ')} | ${ms(w.cpu.total)} | ${w.loadAverage.join(' ')} |`,
    );
  }
  console.log('\nThe token statement alone (`select pg_current_wal_lsn()` through a knex pool, calls in a row)\n');
  console.log('| round | calls | p50 ms | p99 ms | client CPU ms/call | Postgres CPU ms/call | load avg |');
  console.log('| --- | --: | --: | --: | --: | --: | --- |');
  for (const t of report.tokenStatement) {
    console.log(
      `| ${t.round} | ${t.calls} | ${t.p50} | ${t.p99} | ${t.clientCpuMs} | ${t.backendCpuMs} | ${t.loadAverage.join(' ')} |`,
    );
  }
  console.log(`\nRead after write: ${RAW_CONCURRENCY} clients, each POST then GET of what it made\n`);
  console.log(
    '| round | mode | replica apply delay ms | token sent | pairs/s | POST p50 / p99 ms | GET p50 / p99 / mean ms | stale (404) | GETs served by replica | by primary | wait polls | load avg |',
  );
  console.log('| --- | --- | --: | --- | --: | --: | --: | --: | --: | --: | --: | --- |');
  for (const r of report.readAfterWrite) {
    console.log(
      `| ${r.round} | ${r.mode} | ${r.mode === 'with replica' ? r.applyDelayMs : '—'} | ${r.token ? 'yes' : r.mode === 'with replica' ? 'no' : 'none issued'} | ${r.pairsPerSecond} | ${r.post.p50} / ${r.post.p99} | ${r.get.p50} / ${r.get.p99} / ${r.get.mean} | ${r.stale} | ${r.servedByReplica} | ${r.servedByPrimary} | ${r.waitPolls} | ${r.loadAverage.join(' ')} |`,
    );
  }
}
