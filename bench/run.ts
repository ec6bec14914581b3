import autocannon, { type Result } from 'autocannon';
import { autocannonRun } from './bench-runs';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import pg from 'pg';
import { QUEUE } from '../domain/queues/queue-contracts';
import { queuePrefix } from '../infra/redis';
import { PROJECT_ROOT, nodeArgsOf } from '../scripts/process-commands';
import { batchImport, printBatchImport, type BatchImportReport } from './batch-import';
import { rssSampler } from './process-rss';
import { READ_SCENARIOS } from './scenarios';
import { WriteMeasures } from './write-floors';
import { replicaBench, type ReplicaReport } from './replica-reads';
import { tracingCost, type TracingRun } from './tracing-cost';
import { changesFeed, printChangesFeed, type ChangesFeedReport } from './changes-feed';
import { webhookLatency, type WebhookLatency } from './webhook-latency';
import { hostileFuzz, printHostileFuzz, type HostileFuzzReport } from './hostile-fuzz';
import { patchChecks, printPatchChecks } from './patch-check';
import { scaleReads, printScaleReads, type ScaleReport } from './scale-reads';
import { odataReads, printODataReads, type ODataReadsReport } from './odata-reads';

/**
 * `npm run bench`: drives the running service and the floor with autocannon at concurrency 1 and
 * 32 for each scenario of DESIGN §9, and prints req/s, p50, p99, errors and the ratio to the floor,
 * plus the API's peak RSS and the export's rows/s. Results go to bench/results/<time>.json.
 */

const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
/**
 * POSTs (and as many PATCHes) sent once, unmeasured, before the first write run: a fresh API and command worker spend
 * 1.8–2.4× their steady CPU per write until V8 has optimised the write path, which takes
 * ~3,000–4,500 writes (bench/README.md, "the first run"); BENCH_WARMUP's seconds are not enough.
 */
const WRITE_WARMUP_REQUESTS = Number(process.env.BENCH_WRITE_WARMUP_REQUESTS ?? 5000);
/** The service's BullMQ prefix in benchmark runs. */
const QUEUE_PREFIX = 'bench';
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,32').split(',').map(Number);
const API_PORT = Number(process.env.BENCH_API_PORT ?? 3901);
const FLOOR_PORT = Number(process.env.BENCH_FLOOR_PORT ?? 3902);
/** The bare queue round trip's HTTP side (bench/queue-floor-server.ts). */
const QUEUE_FLOOR_PORT = Number(process.env.BENCH_QUEUE_FLOOR_PORT ?? FLOOR_PORT + 1);
const databaseUrl = process.env.DATABASE_URL!;
/** BENCH_ONLY=keyed,post,… limits the run to some scenarios (scaling runs); empty runs all. */
const ONLY = new Set((process.env.BENCH_ONLY ?? '').split(',').filter(Boolean));
const selected = (name: string) =>
  ONLY.size === 0 || [...ONLY].some((key) => name.toLowerCase().includes(key.toLowerCase()));
const redisUrl = process.env.REDIS_URL!;
/**
 * Retention in the benchmark: a window of seconds instead of a day, so a run shows whether pruning
 * keeps the outbox and the command log at about (window + interval) × write rate.
 */
const RETENTION_WINDOW_S = Number(process.env.BENCH_RETENTION_WINDOW_S ?? 20);
const RETENTION_INTERVAL_MS = 5000;
const RETENTION_RUN_S = Number(process.env.BENCH_RETENTION_SECONDS ?? 60);
/** The webhook delivery run (DESIGN §16): how long POSTs go on at the sustained rate (c=16). */
const WEBHOOK_RUN_S = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 30);

interface Row {
  scenario: string;
  concurrency: number;
  /**
   * `hand`: the hand-written read floor (handwritten-floor.ts), same bytes as the service;
   * `queue`: the bare BullMQ round trip (bench/queue-floor-server.ts).
   */
  target: 'service' | 'floor' | 'hand' | 'queue' | 'design';
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
  /** The API's peak RSS during this run (service runs only). */
  peakRssMiB?: number;
}

const children: ChildProcess[] = [];
/** Set once the run is over and the bench stops its processes itself. */
let stopping = false;
/** Waits (up to 5 minutes) until the event workers have no waiting or running jobs. */
async function eventBacklogDrained(): Promise<void> {
  const queues = [QUEUE.views, QUEUE.notifications].map(
    (name) =>
      new Queue(name, {
        connection: { url: redisUrl },
        prefix: queuePrefix({ redis: { url: redisUrl }, queuePrefix: QUEUE_PREFIX }, name),
      }),
  );
  try {
    const deadline = Date.now() + 300_000;
    for (let reported = false; ;) {
      const counts = await Promise.all(queues.map((q) => q.getJobCounts('wait', 'active', 'prioritized', 'delayed')));
      const left = counts.reduce((n, c) => n + Object.values(c).reduce((a, b) => a + b, 0), 0);
      if (left === 0) return;
      if (Date.now() > deadline) throw new Error(`${left} event jobs still queued after 5 minutes`);
      if (!reported) console.error(`  waiting for ${left} event jobs of an earlier run to finish…`);
      reported = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
}

/** Starts a process with these node arguments (flags and entry file). */
/** Waits (up to 60 s) until no other backend of the bench database is running a statement. */
async function databaseIdle(db: pg.Pool): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { rows } = await db.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
    );
    if (rows[0]!.n === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function start(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  // A process that dies mid-run explains the failures that follow it: say so at once.
  child.on('exit', (code, signal) => {
    if (!stopping)
      console.error(`[bench] ${path.relative(PROJECT_ROOT, args.at(-1)!)} exited (code ${code}, signal ${signal})`);
  });
  return child;
}

/** Waits (up to 30 s) until a POST to `url` succeeds (the queue floor: its worker is up too). */
async function waitForPost(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function waitFor(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * One measured run, after BENCH_WARMUP seconds of the same load unmeasured (JIT, caches, pools), so
 * service and floor are compared warm whatever ran before.
 */
async function cannon(opts: autocannon.Options, beforeMeasure?: () => Promise<void>): Promise<Result> {
  if (WARMUP > 0) await autocannonRun({ ...opts, duration: WARMUP });
  await beforeMeasure?.();
  return autocannonRun({ duration: DURATION, ...opts });
}

function rowOf(scenario: string, concurrency: number, target: Row['target'], r: Result): Row {
  return {
    scenario,
    concurrency,
    target,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    requests: r.requests.total,
  };
}

/** Rotates over many keys so the keyed scenario is not one cached row. */
function rotating(keys: number[], toPath: (key: number) => string): autocannon.Request[] {
  let i = 0;
  return [
    {
      setupRequest: (req: autocannon.Request) => {
        i = (i + 1) % keys.length;
        return { ...req, path: toPath(keys[i]!) };
      },
    } as autocannon.Request,
  ];
}

async function main(): Promise<void> {
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const { rows: keyRows } = await db.query<{ id: number; encoded_id: string }>(
    'select id, encoded_id from schemes order by random() limit 5000',
  );
  const keys = keyRows.map((r) => r.id);
  const encoded = new Map(keyRows.map((r) => [r.id, r.encoded_id]));
  const { rows: countRows } = await db.query<{ n: number }>('select count(*)::int as n from schemes');
  const schemeCount = countRows[0]!.n;
  if (keys.length === 0) throw new Error('no schemes: seed first (npm run bench -- --schemes 100000)');

  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    AUTH_MOCK: 'true',
    COMMAND_SIGNING_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    QUEUE_PREFIX: QUEUE_PREFIX,
    NODE_ENV: 'development',
    OUTBOX_RETENTION_HOURS: String(RETENTION_WINDOW_S / 3600),
    COMMAND_LOG_RETENTION_HOURS: String(RETENTION_WINDOW_S / 3600),
    RETENTION_INTERVAL_MS: String(RETENTION_INTERVAL_MS),
    // GET /Changes at scale: every stream is the one mock caller's; drops are read from /metrics.
    ...(selected('changes') ? { METRICS_ENABLED: 'true', CHANGES_MAX_LISTENERS_PER_SUBJECT: '5000' } : {}),
    // The hostile fuzz reads the API's event-loop delay histogram from /metrics.
    ...(selected('hostile') ? { METRICS_ENABLED: 'true' } : {}),
    // The webhook run's receiver listens on 127.0.0.1 (bench/webhook-latency.ts).
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  };
  // Each process as `npm start` runs it (package.json scripts, V8 flags included).
  // BENCH_API_CPU_PROF=<dir>: the API writes a V8 CPU profile there when it stops (to find what holds its loop).
  const profile = process.env.BENCH_API_CPU_PROF;
  const apiArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, ...nodeArgsOf('api')] : nodeArgsOf('api');
  const api = start(apiArgs, { ...env, PORT: String(API_PORT) });
  // BENCH_API_NICE=-10: the API first on the CPU (root only), to tell its own event-loop turns from
  // its waits for a core that Postgres, Redis, the workers and the load generator share with it.
  const apiNice = process.env.BENCH_API_NICE;
  if (apiNice !== undefined && api.pid !== undefined) os.setPriority(api.pid, Number(apiNice));
  const commands = start(nodeArgsOf('commands'), env);
  const views = start(nodeArgsOf('views'), env);
  const notifications = start(nodeArgsOf('notifications'), env);
  const floorServer = start([path.join(PROJECT_ROOT, 'dist/bench/floor-server.js')], {
    DATABASE_URL: databaseUrl,
    PORT: String(FLOOR_PORT),
  });
  const writes = selected('POST') || selected('PATCH');
  // The queue floors: the HTTP side and, in another process, the worker (the bare round trip, no
  // database; and the design floor, the same round trip with the transaction the design requires).
  const queueFloor = writes
    ? [
        start([path.join(PROJECT_ROOT, 'dist/bench/queue-floor-server.js')], {
          REDIS_URL: redisUrl,
          PORT: String(QUEUE_FLOOR_PORT),
        }),
        start([path.join(PROJECT_ROOT, 'dist/bench/queue-floor-worker.js')], {
          REDIS_URL: redisUrl,
          DATABASE_URL: databaseUrl,
        }),
      ]
    : [];
  await waitFor(`http://127.0.0.1:${API_PORT}/health/ready`);
  await waitFor(`http://127.0.0.1:${FLOOR_PORT}/floor/keyed/${keys[0]}`);
  if (writes) await waitForPost(`http://127.0.0.1:${QUEUE_FLOOR_PORT}/floor/queue`);
  // Events a previous run's writes left behind would be handled during this run's reads.
  await eventBacklogDrained();
  const rss = rssSampler(api.pid!);

  const rows: Row[] = [];
  /** A run against the service, with the API's peak RSS while it ran. */
  const serviceRow = async (name: string, c: number, run: () => Promise<Result>): Promise<Row> => {
    const peak = rss.window();
    const result = await run();
    return { ...rowOf(name, c, 'service', result), peakRssMiB: peak() };
  };
  const service = `http://127.0.0.1:${API_PORT}`;
  const floor = `http://127.0.0.1:${FLOOR_PORT}`;
  const designFloor = `http://127.0.0.1:${QUEUE_FLOOR_PORT}`;
  const log = (r: Row) =>
    console.error(
      `  ${r.target.padEnd(7)} c=${String(r.concurrency).padEnd(2)} ${r.scenario}: ${r.rps} req/s p50 ${r.p50} ms p99 ${r.p99} ms errors ${r.errors}`,
    );

  for (const [i, scenario] of READ_SCENARIOS.entries()) {
    if (!selected(scenario.name)) continue;
    for (const c of CONCURRENCIES) {
      const keyed = scenario.path.includes('{key}');
      rows.push(
        await serviceRow(scenario.name, c, () =>
          cannon({
            url: keyed ? service : `${service}${scenario.path}`,
            connections: c,
            ...(keyed ? { requests: rotating(keys, (k) => `/Schemes/${encoded.get(k)}`) } : {}),
          }),
        ),
      );
      log(rows[rows.length - 1]!);
      // Both read floors, on the floor server: the service's own SQL, and hand-written statements.
      for (const [target, prefix] of [
        ['floor', '/floor'],
        ['hand', '/hand'],
      ] as const) {
        const result = await cannon({
          url: keyed ? floor : `${floor}${prefix}/list/${i}`,
          connections: c,
          ...(keyed ? { requests: rotating(keys, (k) => `${prefix}/keyed/${k}`) } : {}),
        });
        rows.push(rowOf(scenario.name, c, target, result));
        log(rows[rows.length - 1]!);
      }
      // Requests a client gave up on may still be running (up to STATEMENT_TIMEOUT_MS): the next
      // run starts on an idle database, not on this one's leftovers.
      await databaseIdle(db);
    }
  }

  await databaseIdle(db);
  // Writes: POST minimal and PATCH, through the queue vs one direct transaction and vs the bare
  // queue round trip, with the CPU per request of every process and the POSTs' event latency.
  const measures = await WriteMeasures.create({
    db,
    redisUrl,
    processes: {
      API: api.pid!,
      'command worker': commands.pid!,
      'view worker': views.pid!,
      'notification worker': notifications.pid!,
      'floor server': floorServer.pid!,
      ...(queueFloor.length
        ? { 'queue floor server': queueFloor[0]!.pid!, 'queue floor worker': queueFloor[1]!.pid! }
        : {}),
    },
    eventsDrained: eventBacklogDrained,
  });
  const post = {
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ SchemeName: 'Bench [<id>]' }),
    idReplacement: true,
  };
  const patch = {
    method: 'PATCH' as const,
    headers: { 'content-type': 'application/json-patch+json' },
    body: JSON.stringify([{ op: 'replace', path: '/TotalUnits', value: 7 }]),
  };
  if (writes && WRITE_WARMUP_REQUESTS > 0) {
    console.error(
      `  warming the write paths up: ${WRITE_WARMUP_REQUESTS} POSTs and PATCHes to the service and each floor`,
    );
    for (const url of [
      `${service}/Schemes`,
      `${floor}/floor/schemes`,
      `http://127.0.0.1:${QUEUE_FLOOR_PORT}/floor/queue`,
      `http://127.0.0.1:${QUEUE_FLOOR_PORT}/floor/design/schemes`,
    ]) {
      await autocannonRun({ url, connections: 16, amount: WRITE_WARMUP_REQUESTS, ...post });
    }
    // A PATCH runs code (and statements) a POST never does: it is warmed up on its own.
    for (const [url, path] of [
      [service, (k: number) => `/Schemes/${encoded.get(k)}`],
      [floor, (k: number) => `/floor/schemes/${k}`],
      [designFloor, (k: number) => `/floor/design/schemes/${k}`],
    ] as const) {
      await autocannonRun({
        url,
        connections: 16,
        amount: WRITE_WARMUP_REQUESTS,
        ...patch,
        requests: rotating(keys, path),
      });
    }
    await eventBacklogDrained();
  }
  for (const c of writes ? CONCURRENCIES : []) {
    const POST = 'POST (minimal)';
    rows.push(
      await serviceRow(POST, c, () =>
        measures.run({ run: POST, concurrency: c, target: 'service', posts: true }, (before) =>
          cannon({ url: `${service}/Schemes`, connections: c, ...post }, before),
        ),
      ),
    );
    log(rows[rows.length - 1]!);
    const floorPost = await measures.run({ run: POST, concurrency: c, target: 'floor' }, (before) =>
      cannon({ url: `${floor}/floor/schemes`, connections: c, ...post }, before),
    );
    rows.push(rowOf(POST, c, 'floor', floorPost));
    log(rows[rows.length - 1]!);
    const queueRun = await measures.run({ run: 'round trip', concurrency: c, target: 'queue' }, (before) =>
      cannon({ url: `http://127.0.0.1:${QUEUE_FLOOR_PORT}/floor/queue`, connections: c, ...post }, before),
    );
    rows.push(rowOf('queue round trip', c, 'queue', queueRun));
    log(rows[rows.length - 1]!);
    const designPost = await measures.run({ run: POST, concurrency: c, target: 'design' }, (before) =>
      cannon({ url: `${designFloor}/floor/design/schemes`, connections: c, ...post }, before),
    );
    rows.push(rowOf(POST, c, 'design', designPost));
    log(rows[rows.length - 1]!);
    rows.push(
      await serviceRow('PATCH', c, () =>
        measures.run({ run: 'PATCH', concurrency: c, target: 'service' }, (before) =>
          cannon(
            { url: service, connections: c, ...patch, requests: rotating(keys, (k) => `/Schemes/${encoded.get(k)}`) },
            before,
          ),
        ),
      ),
    );
    log(rows[rows.length - 1]!);
    const floorPatch = await measures.run({ run: 'PATCH', concurrency: c, target: 'floor' }, (before) =>
      cannon({ url: floor, connections: c, ...patch, requests: rotating(keys, (k) => `/floor/schemes/${k}`) }, before),
    );
    rows.push(rowOf('PATCH', c, 'floor', floorPatch));
    log(rows[rows.length - 1]!);
    const designPatch = await measures.run({ run: 'PATCH', concurrency: c, target: 'design' }, (before) =>
      cannon(
        { url: designFloor, connections: c, ...patch, requests: rotating(keys, (k) => `/floor/design/schemes/${k}`) },
        before,
      ),
    );
    rows.push(rowOf('PATCH', c, 'design', designPatch));
    log(rows[rows.length - 1]!);
  }

  // Export of every scheme in both formats: rows/s while streaming.
  const exports: { format: string; rows: number; seconds: number; status: number; peakRssMiB: number }[] = [];
  for (const format of selected('export') ? ['text/csv', 'application/x-ndjson'] : []) {
    const exportRss = rss.window();
    const started = Date.now();
    const res = await fetch(`${service}/Export/Schemes`, { headers: { accept: format } });
    let lines = 0;
    if (res.ok && res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const byte of value) if (byte === 10) lines++;
      }
    }
    // CSV has a header line; NDJSON one line per row.
    exports.push({
      format,
      rows: format === 'text/csv' ? lines - 1 : lines,
      seconds: (Date.now() - started) / 1000,
      status: res.status,
      peakRssMiB: exportRss(),
    });
  }
  // 1,000 GET /Changes streams on the one API process while POSTs arrive (bench/changes-feed.ts).
  let changes: ChangesFeedReport | undefined;
  if (selected('changes')) {
    changes = await changesFeed({ db, service, rss, eventsDrained: eventBacklogDrained });
  }
  // Retention at the sustained POST rate: rows held in the outbox and the command log vs the window.
  let retention:
    | {
        writesPerSecond: number;
        windowSeconds: number;
        intervalSeconds: number;
        maxOutbox: number;
        maxCommandLog: number;
        bound: number;
      }
    | undefined;
  if (selected('retention')) {
    const count = async (table: string) =>
      (await db.query<{ n: number }>(`select count(*)::int as n from ${table}`)).rows[0]!.n;
    let maxOutbox = 0;
    let maxCommandLog = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxOutbox = Math.max(maxOutbox, await count('outbox'));
        maxCommandLog = Math.max(maxCommandLog, await count('command_log'));
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    // The longest POST run: its event latency is the one at a sustained rate.
    const result = await measures.run(
      { run: 'POST (retention run)', concurrency: 16, target: 'service', posts: true },
      (before) =>
        cannon(
          {
            url: `${service}/Schemes`,
            connections: 16,
            duration: RETENTION_RUN_S,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ SchemeName: 'Retention [<id>]' }),
            idReplacement: true,
          },
          before,
        ),
    );
    sampling = false;
    await sampler;
    const writesPerSecond = Math.round(result.requests.average);
    retention = {
      writesPerSecond,
      windowSeconds: RETENTION_WINDOW_S,
      intervalSeconds: RETENTION_INTERVAL_MS / 1000,
      maxOutbox,
      maxCommandLog,
      // Rows younger than the window, plus what one interval adds before the next run removes it.
      bound: Math.round(writesPerSecond * (RETENTION_WINDOW_S + RETENTION_INTERVAL_MS / 1000)),
    };
  }
  // Webhook deliveries at the sustained POST rate (DESIGN §16): latency from commit to the receiver.
  let webhooks: WebhookLatency | undefined;
  if (selected('webhooks')) {
    webhooks = await webhookLatency({
      db,
      service,
      drive: async () => {
        let endedAt = 0;
        const result = await measures.run(
          { run: 'POST (webhook run)', concurrency: 16, target: 'service', posts: true },
          (before) =>
            cannon(
              {
                url: `${service}/Schemes`,
                connections: 16,
                duration: WEBHOOK_RUN_S,
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ SchemeName: 'Webhook [<id>]' }),
                idReplacement: true,
              },
              before,
            ).finally(() => (endedAt = Date.now())),
        );
        return { writesPerSecond: Math.round(result.requests.average), endedAt };
      },
    });
  }
  // `/odata` beside the root, and `$select` against the full page (bench/odata-reads.ts, issue 26).
  let odata: ODataReadsReport | undefined;
  if (selected('odata')) {
    odata = await odataReads({
      service,
      keys: keys.map((k) => encoded.get(k)!),
      durationSeconds: DURATION,
      warmupSeconds: WARMUP,
      databaseIdle: () => databaseIdle(db),
    });
  }
  // Reads whose cost could grow with the table, at this data set's size (bench/scale-reads.ts, issue 27).
  let scale: ScaleReport | undefined;
  if (selected('scale')) {
    scale = await scaleReads({
      service,
      db,
      schemes: schemeCount,
      keyedRequests: rotating(keys, (k) => `/Schemes/${encoded.get(k)}`),
      planKey: keys[0]!,
      durationSeconds: Number(process.env.BENCH_SCALE_DURATION ?? 5),
      warmupSeconds: Number(process.env.BENCH_SCALE_WARMUP ?? 1),
      databaseIdle: () => databaseIdle(db),
    });
    await databaseIdle(db);
  }
  // The event loop under hostile input (bench/hostile-fuzz.ts, issue 24).
  let hostile: HostileFuzzReport | undefined;
  if (selected('hostile')) {
    hostile = await hostileFuzz({
      service,
      requests: Number(process.env.BENCH_HOSTILE_REQUESTS ?? 10_000),
      concurrency: Number(process.env.BENCH_HOSTILE_CONCURRENCY ?? 8),
    });
    printHostileFuzz(hostile);
    await databaseIdle(db);
  }
  // What a hostile JSON Patch costs to check, in this process (bench/patch-check.ts).
  const patchCheck = selected('patch-check') ? patchChecks() : undefined;
  if (patchCheck) printPatchChecks(patchCheck);
  // $batch imports (DESIGN §12): last, since they add their Companies and Schemes to the data set.
  let batch: BatchImportReport | undefined;
  if (selected('batch')) {
    batch = await batchImport({
      db,
      service,
      measures,
      processes: {
        API: api.pid!,
        'command worker': commands.pid!,
        'view worker': views.pid!,
        'notification worker': notifications.pid!,
      },
      eventsDrained: eventBacklogDrained,
    });
  }
  // Tracing off vs on (bench/tracing-cost.ts): processes of their own, on a queue prefix of their own.
  let tracing: TracingRun[] | undefined;
  if (selected('tracing')) {
    tracing = await tracingCost({
      env,
      redisUrl,
      concurrency: Number(process.env.BENCH_TRACING_CONCURRENCY ?? 32),
      durationSeconds: DURATION,
      warmupRequests: WRITE_WARMUP_REQUESTS,
    });
  }
  // Reads on a streaming replica and the consistency token's cost (bench/replica-reads.ts): processes of their own.
  let replica: ReplicaReport | undefined;
  if (selected('replica')) {
    replica = await replicaBench({
      env,
      databaseUrl,
      redisUrl,
      keys,
      encoded,
      listPath: READ_SCENARIOS.find((s) => s.name.startsWith('list'))!.path,
      durationSeconds: DURATION,
      warmupSeconds: WARMUP,
      warmupRequests: WRITE_WARMUP_REQUESTS,
    });
  }
  const peakRss = rss.peakMiB();
  rss.stop();

  const byKey = new Map(rows.map((r) => [`${r.scenario}|${r.concurrency}|${r.target}`, r]));
  const table = rows
    .filter((r) => r.target === 'service')
    .map((r) => {
      const f = byKey.get(`${r.scenario}|${r.concurrency}|floor`);
      const h = byKey.get(`${r.scenario}|${r.concurrency}|hand`);
      return {
        ...r,
        floorRps: f?.rps ?? 0,
        ratio: f && f.rps ? Number((r.rps / f.rps).toFixed(2)) : null,
        handRps: h?.rps,
        handRatio: h && h.rps ? Number((r.rps / h.rps).toFixed(2)) : null,
      };
    });
  console.log(
    `\nEntity Management API benchmark — ${new Date().toISOString()} — ${os.cpus().length} cores, ${schemeCount} schemes, ${DURATION} s per run\n`,
  );
  console.log(
    '| scenario | c | req/s | p50 ms | p99 ms | errors | floor req/s | ratio | hand-written req/s | vs hand-written | API RSS MiB |',
  );
  console.log('| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |');
  for (const r of table)
    console.log(
      `| ${r.scenario} | ${r.concurrency} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.floorRps} | ${r.ratio ?? '–'} | ${r.handRps ?? '–'} | ${r.handRatio ?? '–'} | ${r.peakRssMiB ?? '–'} |`,
    );
  for (const e of exports) {
    console.log(
      `export ${e.format}: ${e.rows} rows in ${e.seconds.toFixed(1)} s = ${Math.round(e.rows / e.seconds)} rows/s, API peak RSS ${e.peakRssMiB} MiB (HTTP ${e.status})`,
    );
  }
  if (retention) {
    console.log(
      `retention at ${retention.writesPerSecond} POST/s for ${RETENTION_RUN_S} s (window ${retention.windowSeconds} s, run every ${retention.intervalSeconds} s): ` +
        `outbox held at most ${retention.maxOutbox} rows, command_log ${retention.maxCommandLog}; (window + interval) × rate = ${retention.bound}`,
    );
  }
  if (webhooks) {
    console.log(
      `webhooks at ${webhooks.writesPerSecond} POST/s for ${WEBHOOK_RUN_S} s, one subscription: ${webhooks.delivered}/${webhooks.schemes} delivered, ` +
        `from commit p50 ${webhooks.p50} ms, p99 ${webhooks.p99} ms, max ${webhooks.max} ms (after the activity entry: p50 ${webhooks.afterActivity.p50} ms, p99 ${webhooks.afterActivity.p99} ms); ${webhooks.duplicates} duplicates; the last ${webhooks.settledAfterMs} ms after the last POST; load average ${webhooks.loadAverage.join(' → ')}`,
    );
  }
  const writesReport = measures.cpu.length ? measures.report(rows) : undefined;
  if (batch) printBatchImport(batch);
  if (changes) printChangesFeed(changes);
  if (hostile) printHostileFuzz(hostile);
  if (scale) printScaleReads(scale, process.env.BENCH_SCALE_BASELINE);
  if (odata) printODataReads(odata);
  console.log(`API peak RSS over the whole run: ${peakRss.toFixed(0)} MiB`);

  mkdirSync(path.join(PROJECT_ROOT, 'bench/results'), { recursive: true });
  const file = path.join(PROJECT_ROOT, 'bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        cores: os.cpus().length,
        schemes: schemeCount,
        durationSeconds: DURATION,
        rows: table,
        exports,
        retention,
        webhooks,
        writes: writesReport,
        batch,
        tracing,
        replica,
        changes,
        hostile,
        scale,
        odata,
        patchChecks: patchCheck,
        apiProcesses: process.env.API_PROCESSES ?? '1',
        commandWorkerProcesses: process.env.COMMAND_WORKER_PROCESSES ?? '1',
        apiPeakRssMiB: peakRss,
      },
      null,
      2,
    ),
  );
  console.log(`results: ${path.relative(PROJECT_ROOT, file)}`);
  await db.end();
}

main()
  .catch((err: unknown) => {
    console.error(`[bench] failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => {
    stopping = true;
    for (const child of children) child.kill('SIGTERM');
    // A failed run leaves timers and pools open: do not wait for them.
    if (process.exitCode) setTimeout(() => process.exit(), 1000).unref();
  });
