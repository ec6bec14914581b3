import type pg from 'pg';
import type { Result } from 'autocannon';
import { Redis } from 'ioredis';
import { cpuWindow, type CpuPerRequest, type TrackedProcess } from './process-cpu';
import { eventLatency, schemeMark, type EventLatency } from './event-latency';
import { postgresByClient } from './postgres-clients';
import { readFileSync, statSync } from 'node:fs';

/**
 * The write side of the benchmark beyond req/s (DESIGN §9, issue 12): each write run measured
 * against both floors (the direct transaction and the bare queue round trip), the CPU each process
 * spends per request, and for POST runs how long the events take to reach search and the activity
 * log. bench/run.ts drives the runs; this module measures around them and reports.
 */

/** The fields of a bench/run.ts result row this report reads. */
interface RunRow {
  scenario: string;
  concurrency: number;
  target: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface CpuWindowRecord extends CpuPerRequest {
  /** Postgres's share by the process its backends serve (ms per request); the rest is "other". */
  postgresFor: Record<string, number>;
}

export interface CpuRecord extends CpuWindowRecord {
  run: string;
  concurrency: number;
  target: string;
}

export interface LatencyRecord extends EventLatency {
  run: string;
  concurrency: number;
  postsPerSecond: number;
}

const POSTGRES = 'Postgres (all backends)';
const REDIS = 'Redis';
const STORES = [POSTGRES, REDIS];

/** How long the processes are watched with no load, for the idle CPU the tables' net row subtracts. */
const IDLE_WINDOW_MS = 3000;

/** The server process of a local Postgres or Redis (null when it runs elsewhere). */
async function storePids(db: pg.Pool, redisUrl: string): Promise<{ postgres: number | null; redis: number | null }> {
  const backend = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  let postgres: number | null;
  try {
    // A backend's parent is the postmaster; reading it proves the server runs on this machine.
    const stat = readFileSync(`/proc/${backend}/stat`, 'utf8');
    postgres = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    postgres = null;
  }
  const redis = new Redis(redisUrl);
  try {
    const info = await redis.info('server');
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    return { postgres, redis: pid && existsProc(pid) ? pid : null };
  } finally {
    redis.disconnect();
  }
}

function existsProc(pid: number): boolean {
  try {
    statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

export interface WriteMeasuresOptions {
  db: pg.Pool;
  redisUrl: string;
  /** Node processes the bench started, by row label. */
  processes: Record<string, number>;
  /** Resolves once the event workers have nothing queued. */
  eventsDrained: () => Promise<void>;
}

export class WriteMeasures {
  readonly cpu: CpuRecord[] = [];
  readonly latency: LatencyRecord[] = [];

  /** CPU ms per second of every process together with no load (timers, polls, retention): before the first run. */
  private idleMsPerSecond = 0;
  private idleMeasured = false;

  /** The processes whose Postgres backends are told apart (every one but the stores). */
  private readonly clients: TrackedProcess[];

  private constructor(
    private readonly options: WriteMeasuresOptions,
    private readonly tracked: TrackedProcess[],
  ) {
    this.clients = tracked.filter((p) => !STORES.includes(p.label));
  }

  static async create(options: WriteMeasuresOptions): Promise<WriteMeasures> {
    const stores = await storePids(options.db, options.redisUrl);
    const tracked: TrackedProcess[] = Object.entries(options.processes).map(([label, pid]) => ({
      label,
      pid,
      withDescendants: true, // several API or worker processes under a cluster primary
    }));
    if (stores.postgres) tracked.push({ label: POSTGRES, pid: stores.postgres, withDescendants: true });
    if (stores.redis) tracked.push({ label: REDIS, pid: stores.redis, withDescendants: false });
    // autocannon runs in this process (its children are the service: not counted here).
    tracked.push({ label: 'load generator', pid: process.pid, withDescendants: false });
    return new WriteMeasures(options, tracked);
  }

  /**
   * One write run. `drive` runs the load and calls `beforeMeasure` between its warm-up and the
   * measured part: then the event queues are drained (so the window holds this run's work only) and
   * counting starts. Counting ends once this run's events are handled too, so the event workers'
   * CPU for its writes is in the window. POST runs on the service also measure the event latency.
   */
  async run(
    label: { run: string; concurrency: number; target: string; posts?: boolean },
    drive: (beforeMeasure: () => Promise<void>) => Promise<Result>,
  ): Promise<Result> {
    if (!this.idleMeasured) {
      await this.options.eventsDrained();
      const idle = cpuWindow(this.tracked);
      await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
      const { total, seconds } = idle(1);
      this.idleMsPerSecond = Number((total / seconds).toFixed(1));
      this.idleMeasured = true;
    }
    let mark = 0;
    let counting: ((requests: number) => Promise<CpuWindowRecord>) | undefined;
    const result = await drive(async () => {
      await this.options.eventsDrained();
      if (label.posts) mark = await schemeMark(this.options.db);
      counting = await this.cpuWindow();
    });
    if (label.posts) {
      const latency = await eventLatency(this.options.db, mark, await schemeMark(this.options.db));
      this.latency.push({
        run: label.run,
        concurrency: label.concurrency,
        postsPerSecond: Math.round(result.requests.average),
        ...latency,
      });
    }
    await this.options.eventsDrained();
    const cpu = await counting!(result.requests.total);
    this.cpu.push({ run: label.run, concurrency: label.concurrency, target: label.target, ...cpu });
    return result;
  }

  /**
   * Starts counting the CPU of every tracked process, and Postgres's split by the process its
   * backends serve. The function returned ends the window and divides by `units` (requests,
   * entities): the caller ends it once the work it counts is done, events included.
   */
  async cpuWindow(): Promise<(units: number) => Promise<CpuWindowRecord>> {
    const postgresSplit = await postgresByClient(this.options.db, this.clients);
    const counting = cpuWindow(this.tracked);
    return async (units) => {
      const readSplit = await postgresSplit();
      const cpu = counting(units);
      const postgresFor: Record<string, number> = {};
      for (const [client, ms] of readSplit()) postgresFor[client] = Number((ms / Math.max(1, units)).toFixed(2));
      return { ...cpu, postgresFor };
    };
  }

  /** Prints the writes against both floors, the event latency and the CPU table; returns them for the results file. */
  report(rows: readonly RunRow[]): object {
    const find = (scenario: string, c: number, target: string) =>
      rows.find((r) => r.scenario === scenario && r.concurrency === c && r.target === target);
    const ratio = (a: number, b: number | undefined) => (b ? Number((a / b).toFixed(2)) : null);
    const writes = rows
      .filter((r) => r.target === 'service' && this.cpu.some((x) => x.run === r.scenario))
      .map((r) => {
        const transaction = find(r.scenario, r.concurrency, 'floor');
        const queue = rows.find((q) => q.target === 'queue' && q.concurrency === r.concurrency);
        const design = find(r.scenario, r.concurrency, 'design');
        return {
          scenario: r.scenario,
          concurrency: r.concurrency,
          rps: r.rps,
          p50: r.p50,
          p99: r.p99,
          transactionRps: transaction?.rps ?? null,
          ratioToTransaction: ratio(r.rps, transaction?.rps),
          queueRps: queue?.rps ?? null,
          ratioToQueue: ratio(r.rps, queue?.rps),
          designRps: design?.rps ?? null,
          designP50: design?.p50 ?? null,
          ratioToDesign: ratio(r.rps, design?.rps),
        };
      });
    if (writes.length) {
      console.log(
        '\nWrites against the floors (direct transaction; bare BullMQ round trip, no database; the design floor: the round trip with the transaction the design requires)\n',
      );
      console.log(
        '| scenario | c | req/s | p50 ms | p99 ms | transaction req/s | ratio | queue round trip req/s | ratio | design floor req/s | p50 ms | ratio |',
      );
      console.log('| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |');
    }
    for (const w of writes)
      console.log(
        `| ${w.scenario} | ${w.concurrency} | ${w.rps} | ${w.p50} | ${w.p99} | ${w.transactionRps ?? '–'} | ${w.ratioToTransaction ?? '–'} | ${w.queueRps ?? '–'} | ${w.ratioToQueue ?? '–'} | ${w.designRps ?? '–'} | ${w.designP50 ?? '–'} | ${w.ratioToDesign ?? '–'} |`,
      );
    for (const q of rows.filter((r) => r.target === 'queue'))
      console.log(
        `queue round trip alone, c=${q.concurrency}: ${q.rps} req/s, p50 ${q.p50} ms, p99 ${q.p99} ms, errors ${q.errors}`,
      );
    for (const l of this.latency) {
      const lag = (x: EventLatency['search']) =>
        `p50 ${x.p50 ?? '–'} ms, p99 ${x.p99 ?? '–'} ms, max ${x.max ?? '–'} ms${x.missing ? `, ${x.missing} missing` : ''}`;
      console.log(
        `events of ${l.run} c=${l.concurrency}, ${l.schemes} POSTs at ${l.postsPerSecond}/s: search ${lag(l.search)}; activity log ${lag(l.activities)}`,
      );
    }
    this.printCpu();
    return { writes, eventLatency: this.latency, cpuMsPerRequest: this.cpu, idleCpuMsPerSecond: this.idleMsPerSecond };
  }

  private printCpu(): void {
    const service = this.cpu.filter((x) => x.target === 'service');
    const floors = this.cpu.filter((x) => x.target !== 'service');
    console.log(
      `\nCPU ms per request, by process (/proc/<pid>/stat over the measured run and its events; all processes idle: ${this.idleMsPerSecond} ms/s)\n`,
    );
    this.printCpuTable(service, (x) => `${x.run} c=${x.concurrency}`);
    console.log(
      '\nthe floors (transaction: floor server + Postgres; queue: bare round trip, no database; design: the round trip with the transaction)\n',
    );
    this.printCpuTable(floors, (x) => `${x.target} ${x.run.replace(' (minimal)', '')} c=${x.concurrency}`);
  }

  /** Processes as rows, runs as columns; a process idle in every run shown (under 0.05 ms) is left out. */
  private printCpuTable(runs: CpuRecord[], head: (x: CpuRecord) => string): void {
    if (runs.length === 0) return;
    console.log(`| process | ${runs.map(head).join(' | ')} |`);
    console.log(`| --- |${' --: |'.repeat(runs.length)}`);
    const cell = (v: number | null | undefined) => (v == null ? '–' : v.toFixed(2));
    for (const { label } of this.tracked) {
      if (runs.every((x) => (x.perProcess[label] ?? 0) < 0.05)) continue;
      console.log(`| ${label} | ${runs.map((x) => cell(x.perProcess[label])).join(' | ')} |`);
      if (label !== POSTGRES) continue;
      for (const client of this.clients.map((p) => p.label)) {
        if (runs.every((x) => (x.postgresFor[client] ?? 0) < 0.05)) continue;
        console.log(`| … serving ${client} | ${runs.map((x) => cell(x.postgresFor[client] ?? 0)).join(' | ')} |`);
      }
      const other = (x: CpuRecord) =>
        (x.perProcess[POSTGRES] ?? 0) - Object.values(x.postgresFor).reduce((a, b) => a + b, 0);
      console.log(
        `| … other (autovacuum, WAL, checkpoints, exited backends) | ${runs.map((x) => cell(other(x))).join(' | ')} |`,
      );
    }
    console.log(`| total (all processes) | ${runs.map((x) => cell(x.total)).join(' | ')} |`);
    // What the processes spend with no load at all, spread over few requests, weighs on slow runs.
    const net = (x: CpuRecord) => x.total - (this.idleMsPerSecond * x.seconds) / Math.max(1, x.requests);
    console.log(`| total less idle | ${runs.map((x) => cell(net(x))).join(' | ')} |`);
  }
}
