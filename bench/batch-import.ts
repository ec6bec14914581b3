import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { Company, Scheme } from '../domain/entities';
import { encodeId } from '../domain/ids/id-codec';
import { eventLatency, schemeMark, type EventLatency } from './event-latency';
import { rssSampler, type RssSampler } from './process-rss';
import type { CpuWindowRecord, WriteMeasures } from './write-floors';

/**
 * `$batch` imports (DESIGN §9 and §12, issue 13), three phases against the running service:
 *
 * 1. Companies, 1,000 POSTs per `$batch` in one atomicity group: Companies/s (target ≥ 10,000/s).
 * 2. Schemes, 500 per `$batch` in one atomicity group, each preceded by the POST of its Address and
 *    referring to it as `{ "Id": "$a<n>" }`, with two Notes, a Tag and a link to an existing
 *    Company: Schemes/s (target ≥ 2,000/s).
 * 3. 100,000 such Schemes, then until every one is searchable (its search documents exist) and in
 *    the activity log (its `SchemeCreated` entry): total time (target < 90 s on 2 cores), with the
 *    RSS of the API and the workers at the start, peak and end.
 *
 * BENCH_BATCH_CLIENTS clients (default 2) send batches concurrently from one shared list. Each
 * phase starts once the event workers have no backlog, and counts the CPU of every process
 * (ms per entity, and seconds in all) until its events are handled too, so the event side's cost is
 * in it; entities/s is over the import alone (first batch sent → last answer).
 */

const CLIENTS = Number(process.env.BENCH_BATCH_CLIENTS ?? 2);
const COMPANIES = Number(process.env.BENCH_BATCH_COMPANIES ?? 50_000);
const SCHEMES = Number(process.env.BENCH_BATCH_SCHEMES ?? 20_000);
/** Phase 3's Schemes; the target is for 100,000 (a smaller number is for trial runs only). */
const IMPORT_SCHEMES = Number(process.env.BENCH_BATCH_IMPORT_SCHEMES ?? 100_000);
/** Batches of each kind sent once, unmeasured, before the first phase (JIT, pools, caches). */
const WARMUP_BATCHES = Number(process.env.BENCH_BATCH_WARMUP ?? 4);
/** How long phase 3 waits for search and the activity log after its last batch. */
const SETTLE_TIMEOUT_MS = Number(process.env.BENCH_BATCH_SETTLE_TIMEOUT_S ?? 600) * 1000;

const COMPANIES_PER_BATCH = 1000;
const SCHEMES_PER_BATCH = 500;
const TARGETS = { companiesPerSecond: 10_000, schemesPerSecond: 2_000, importSeconds: 90 };

interface SubResponse {
  id: string;
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

interface Latency {
  p50: number;
  p99: number;
  max: number;
}

interface DriveResult {
  batches: number;
  /** Entities whose POST answered 201 (Schemes only, in Scheme batches). */
  created: number;
  seconds: number;
  /** Per `$batch` request, ms. */
  latencyMs: Latency;
  /** `$batch` requests that did not answer 200 with every request 201 (after a 202, its command's outcome). */
  failedBatches: number;
  /** Batches answered 202 (not finished within BATCH_TIMEOUT_MS) and followed to their outcome. */
  pendingBatches: number;
  firstFailure?: string;
}

interface RssFigures {
  startMiB: number;
  peakMiB: number;
  endMiB: number;
}

interface PhaseReport {
  phase: string;
  /** Column head in the printed tables. */
  short: string;
  unit: 'Companies' | 'Schemes';
  entities: number;
  entitiesPerBatch: number;
  clients: number;
  import: DriveResult;
  perSecond: number;
  /** From the last answer until the event workers (phase 3: search and the activity log) were done. */
  settleSeconds: number;
  /** CPU ms per entity by process (and Postgres's split by client), over import and events. */
  cpu: CpuWindowRecord;
  /** CPU seconds by process over the same window. */
  cpuSeconds: Record<string, number | null>;
  rss: Record<string, RssFigures>;
  /** RSS by process, MiB, one sample a second from the first batch to the end of the phase. */
  rssSeries: Record<string, number[]>;
}

interface ImportCheck {
  /** First batch sent → every Scheme searchable and in the activity log. */
  totalSeconds: number;
  schemes: number;
  searchable: number;
  recorded: number;
  settled: boolean;
  /** `$search` on single Schemes' unique tokens through the API: how many found exactly their Scheme. */
  searchSpotCheck: { checked: number; found: number };
  /** Per Scheme, from its transaction's start to its search documents and its activity entry. */
  eventLatency: EventLatency;
}

export interface BatchImportReport {
  clients: number;
  companies: PhaseReport;
  schemes: PhaseReport;
  import: PhaseReport & ImportCheck;
  targets: { figure: string; target: string; measured: string; met: boolean }[];
}

export interface BatchImportOptions {
  db: pg.Pool;
  /** The service's base URL. */
  service: string;
  /** CPU windows over every process the bench tracks (bench/write-floors.ts). */
  measures: WriteMeasures;
  /** Node processes whose RSS is followed, by label (API and workers). */
  processes: Record<string, number>;
  eventsDrained: () => Promise<void>;
}

/**
 * Memory that does not grow with the work done: over a phase's once-a-second samples, the peak of
 * the second half at most 10% (and 5 MiB) above the peak of the first half. A process that holds
 * what it imports grows all through; one that only reaches its working set early stays level.
 */
function flat(series: number[]): boolean {
  const half = Math.floor(series.length / 2);
  if (half === 0) return true;
  const first = Math.max(...series.slice(0, half));
  const second = Math.max(...series.slice(half));
  return second <= first * 1.1 + 5;
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** Company write bodies, one atomicity group. */
function companyBatch(run: string, batch: number): string {
  const requests = [];
  for (let i = 0; i < COMPANIES_PER_BATCH; i++) {
    const n = batch * COMPANIES_PER_BATCH + i;
    requests.push({
      id: `c${i}`,
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Companies',
      body: {
        Name: `Import ${run} Holdings ${n}`,
        RegistrationNumber: `BI${String(n).padStart(8, '0')}`,
        Website: `https://c${n}.${run}.example.com`,
      },
    });
  }
  return JSON.stringify({ requests });
}

/** The unique search token of the n-th Scheme of a phase (one `simple` lexeme: letters and digits). */
const tokenOf = (run: string, n: number) => `${run}x${String(n).padStart(7, '0')}`;

/** Address + Scheme pairs, one atomicity group; each Scheme refers to its Address as `$a<i>`. */
function schemeBatch(run: string, batch: number, companies: readonly string[]): string {
  const requests = [];
  for (let i = 0; i < SCHEMES_PER_BATCH; i++) {
    const n = batch * SCHEMES_PER_BATCH + i;
    requests.push(
      {
        id: `a${i}`,
        atomicityGroup: 'g',
        method: 'POST',
        url: 'Addresses',
        body: { AddressLine: `${n} Import Street`, City: 'Leeds', Postcode: `LS${n % 30} ${n % 10}AB` },
      },
      {
        id: `s${i}`,
        atomicityGroup: 'g',
        method: 'POST',
        url: 'Schemes',
        body: {
          SchemeName: `Import ${tokenOf(run, n)}`,
          TotalUnits: n % 400,
          Address: { Id: `$a${i}` },
          Notes: [{ Text: `Imported in batch ${batch}` }, { Text: 'Planning consent granted' }],
          Tags: [{ Name: 'imported' }],
          Companies: [{ Company: { Id: companies[n % companies.length]! }, Role: 'Developer' }],
        },
      },
    );
  }
  return JSON.stringify({ requests });
}

/** Sends one `$batch`; resolves with its responses (following a 202 to its command's outcome). */
async function sendBatch(
  service: string,
  body: string,
): Promise<{ responses?: SubResponse[]; problem?: string; pending: boolean }> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${service}/$batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    text = await res.text();
  } catch (err) {
    // No answer: say why (the cause undici gives), and whether the API is still up.
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const live = await fetch(`${service}/health/live`).then(
      (r) => `API answers /health/live ${r.status}`,
      () => 'API does not answer',
    );
    return {
      problem: `no answer: ${String(err)} (${cause?.code ?? ''} ${cause?.message ?? ''}); ${live}`,
      pending: false,
    };
  }
  if (res.status === 200)
    return { responses: (JSON.parse(text) as { responses: SubResponse[] }).responses, pending: false };
  if (res.status !== 202) return { problem: `HTTP ${res.status}: ${text.slice(0, 500)}`, pending: false };
  const location = res.headers.get('location') ?? '';
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const state = await fetch(`${service}${location}`);
    const command = (await state.json()) as { State: string; Response?: { responses: SubResponse[] } };
    if (command.State === 'Pending') continue;
    if (command.State === 'Succeeded' && command.Response)
      return { responses: command.Response.responses, pending: true };
    return { problem: `202 then ${JSON.stringify(command).slice(0, 500)}`, pending: true };
  }
}

/**
 * Sends `batches` bodies built by `build` from CLIENTS concurrent clients, each taking the next
 * index from one shared counter. `expected` is the number of requests per batch; every one must answer 201.
 */
async function drive(
  service: string,
  batches: number,
  build: (i: number) => string,
  expected: number,
  countCreated: (r: SubResponse) => boolean,
): Promise<DriveResult> {
  let next = 0;
  let created = 0;
  let failedBatches = 0;
  let pendingBatches = 0;
  let firstFailure: string | undefined;
  const latencies: number[] = [];
  const started = performance.now();
  const client = async () => {
    for (let i = next++; i < batches; i = next++) {
      const body = build(i);
      const t0 = performance.now();
      const answer = await sendBatch(service, body);
      latencies.push(performance.now() - t0);
      if (answer.pending) pendingBatches++;
      const responses = answer.responses ?? [];
      const bad = responses.find((r) => r.status !== 201);
      created += responses.filter((r) => r.status === 201 && countCreated(r)).length;
      if (answer.problem || responses.length !== expected || bad) {
        failedBatches++;
        firstFailure ??=
          answer.problem ??
          (bad
            ? `${bad.id}: ${bad.status} ${JSON.stringify(bad.body).slice(0, 500)}`
            : `${responses.length} responses`);
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    batches,
    created,
    seconds: Number(seconds.toFixed(2)),
    latencyMs: {
      p50: Math.round(pct(latencies, 0.5)),
      p99: Math.round(pct(latencies, 0.99)),
      max: Math.round(latencies[latencies.length - 1] ?? 0),
    },
    failedBatches,
    pendingBatches,
    ...(firstFailure ? { firstFailure } : {}),
  };
}

/** RSS samplers of the followed processes, with a once-a-second series per phase. */
class RssWatch {
  private readonly samplers: [string, RssSampler][];

  constructor(processes: Record<string, number>) {
    this.samplers = Object.entries(processes).map(([label, pid]) => [label, rssSampler(pid)]);
  }

  /** Starts a phase; the function returned gives each process's start / peak / end and the series. */
  start(): () => { rss: Record<string, RssFigures>; rssSeries: Record<string, number[]> } {
    const startMiB = new Map(this.samplers.map(([label, s]) => [label, s.currentMiB()]));
    const peaks = new Map(this.samplers.map(([label, s]) => [label, s.window()]));
    const series: Record<string, number[]> = Object.fromEntries(
      this.samplers.map(([label, s]) => [label, [Math.round(s.currentMiB())]]),
    );
    const timer = setInterval(() => {
      for (const [label, s] of this.samplers) series[label]!.push(Math.round(s.currentMiB()));
    }, 1000);
    return () => {
      clearInterval(timer);
      const rss: Record<string, RssFigures> = {};
      for (const [label, s] of this.samplers) {
        rss[label] = {
          startMiB: Math.round(startMiB.get(label)!),
          peakMiB: Math.max(peaks.get(label)!(), Math.round(startMiB.get(label)!)),
          endMiB: Math.round(s.currentMiB()),
        };
      }
      return { rss, rssSeries: series };
    };
  }

  stop(): void {
    for (const [, s] of this.samplers) s.stop();
  }
}

/** Counts of phase 3's Schemes (keys in (from, to]) that have search documents and an activity entry. */
async function importProgress(
  db: pg.Pool,
  from: number,
  to: number,
  activityMark: number,
): Promise<{ schemes: number; searchable: number; recorded: number }> {
  const { rows } = await db.query<{ schemes: number; searchable: number; recorded: number }>(
    `select (select count(*)::int from ${Scheme.table} where id > $1 and id <= $2) as schemes,
            (select count(*)::int from search_fields
              where entity_type = $3 and field = 'SchemeName' and entity_key > $1 and entity_key <= $2) as searchable,
            (select count(*)::int from activities where id > $4 and event_type = $5) as recorded`,
    [from, to, Scheme.name, activityMark, `${Scheme.name}Created`],
  );
  return rows[0]!;
}

/** `$search` through the API for a few phase-3 tokens: each must find exactly its Scheme. */
async function searchSpotCheck(service: string, tokens: string[]): Promise<{ checked: number; found: number }> {
  let found = 0;
  for (const token of tokens) {
    const res = await fetch(`${service}/Schemes?$search=${encodeURIComponent(token)}&$top=2`);
    const body = res.ok ? ((await res.json()) as { SchemeName: string }[]) : [];
    if (body.length === 1 && body[0]!.SchemeName === `Import ${token}`) found++;
  }
  return { checked: tokens.length, found };
}

export async function batchImport(options: BatchImportOptions): Promise<BatchImportReport> {
  const { db, service, measures, eventsDrained } = options;
  // A tag per run, so names and search tokens are unique across runs on the same database.
  const run = `bi${Date.now().toString(36)}`;
  const { rows } = await db.query<{ id: number }>(
    `select id from ${Company.table} order by random() limit ${COMPANIES_PER_BATCH}`,
  );
  if (rows.length === 0) throw new Error('no companies to link the imported Schemes to: seed first');
  const companies = rows.map((r) => encodeId(Company.name, r.id));
  const watch = new RssWatch(options.processes);
  // Each phase's batches are numbered on from the warm-up's, so names and tokens never repeat.
  let companyBatches = 0;
  let schemeBatches = 0;
  const nextCompanyBatch = () => companyBatch(run, companyBatches++);
  const nextSchemeBatch = () => schemeBatch(run, schemeBatches++, companies);
  const isScheme = (r: SubResponse) => r.id.startsWith('s');

  try {
    if (WARMUP_BATCHES > 0) {
      console.error(`  $batch: warming up with ${WARMUP_BATCHES} Company and ${WARMUP_BATCHES} Scheme batches`);
      const warm = [
        await drive(service, WARMUP_BATCHES, nextCompanyBatch, COMPANIES_PER_BATCH, () => true),
        await drive(service, WARMUP_BATCHES, nextSchemeBatch, 2 * SCHEMES_PER_BATCH, isScheme),
      ];
      const failure = warm.find((w) => w.failedBatches > 0);
      if (failure) throw new Error(`$batch warm-up failed: ${failure.firstFailure}`);
    }

    const phase = async (
      short: string,
      name: string,
      unit: PhaseReport['unit'],
      entities: number,
      perBatch: number,
      build: () => string,
      expected: number,
      countCreated: (r: SubResponse) => boolean,
      settle: () => Promise<void>,
    ): Promise<PhaseReport> => {
      await eventsDrained();
      const batches = Math.ceil(entities / perBatch);
      console.error(`  $batch: ${name}: ${batches * perBatch} ${unit} in ${batches} batches, ${CLIENTS} clients`);
      const endRss = watch.start();
      const endCpu = await measures.cpuWindow();
      const result = await drive(service, batches, build, expected, countCreated);
      const settleStarted = performance.now();
      await settle();
      const settleSeconds = Number(((performance.now() - settleStarted) / 1000).toFixed(2));
      // The window's totals (ms), divided here: per entity to the µs, in all to the hundredth of a second.
      const totals = await endCpu(1);
      const n = Math.max(1, result.created);
      const each = (values: Record<string, number | null>, digits: number, divisor: number) =>
        Object.fromEntries(
          Object.entries(values).map(([label, ms]) => [
            label,
            ms === null ? null : Number((ms / divisor).toFixed(digits)),
          ]),
        );
      const cpu: CpuWindowRecord = {
        requests: result.created,
        seconds: totals.seconds,
        perProcess: each(totals.perProcess, 3, n),
        total: Number((totals.total / n).toFixed(3)),
        postgresFor: each(totals.postgresFor, 3, n) as Record<string, number>,
      };
      const cpuSeconds = each(totals.perProcess, 2, 1000);
      const report: PhaseReport = {
        phase: name,
        short,
        unit,
        entities: result.created,
        entitiesPerBatch: perBatch,
        clients: CLIENTS,
        import: result,
        perSecond: Math.round(result.created / result.seconds),
        settleSeconds,
        cpu,
        cpuSeconds,
        ...endRss(),
      };
      console.error(
        `  $batch: ${name}: ${report.perSecond} ${unit}/s (${result.created} in ${result.seconds} s, batch p50 ${result.latencyMs.p50} ms p99 ${result.latencyMs.p99} ms, ${result.failedBatches} failed batches${result.firstFailure ? `: ${result.firstFailure}` : ''}); events done ${settleSeconds} s later`,
      );
      return report;
    };

    const companiesReport = await phase(
      'Companies',
      'Companies, 1,000 per $batch',
      'Companies',
      COMPANIES,
      COMPANIES_PER_BATCH,
      nextCompanyBatch,
      COMPANIES_PER_BATCH,
      () => true,
      eventsDrained,
    );
    const schemesReport = await phase(
      'Schemes',
      'Schemes with Address, Notes, Tag, Company link, 500 per $batch',
      'Schemes',
      SCHEMES,
      SCHEMES_PER_BATCH,
      nextSchemeBatch,
      2 * SCHEMES_PER_BATCH,
      isScheme,
      eventsDrained,
    );

    // Phase 3: the import, timed until every Scheme is searchable and in the activity log.
    await eventsDrained();
    const from = await schemeMark(db);
    const activityMark =
      (await db.query<{ id: number | null }>('select max(id) as id from activities')).rows[0]!.id ?? 0;
    const firstBatch = schemeBatches;
    let settledAfterSeconds = 0;
    let to = from;
    let progress = { schemes: 0, searchable: 0, recorded: 0 };
    let settled = false;
    const importReport = await phase(
      'import',
      `${IMPORT_SCHEMES.toLocaleString('en')} Schemes, then searchable and in the activity log`,
      'Schemes',
      IMPORT_SCHEMES,
      SCHEMES_PER_BATCH,
      nextSchemeBatch,
      2 * SCHEMES_PER_BATCH,
      isScheme,
      async () => {
        const settleStarted = performance.now();
        to = await schemeMark(db);
        for (;;) {
          progress = await importProgress(db, from, to, activityMark);
          settled = progress.searchable === progress.schemes && progress.recorded === progress.schemes;
          settledAfterSeconds = (performance.now() - settleStarted) / 1000;
          if (settled || settledAfterSeconds * 1000 > SETTLE_TIMEOUT_MS) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        // The rest of the events (Addresses, the view worker's other documents) still count in the CPU window.
        await eventsDrained();
      },
    );
    // First batch sent → the poll that saw every Scheme searchable and recorded (250 ms apart).
    const totalSeconds = Number((importReport.import.seconds + settledAfterSeconds).toFixed(2));
    // Tokens of the first, a middle and the last Scheme of the import, and two more.
    const imported = schemeBatches - firstBatch;
    const picks = [0, 1, 2, 3, 4].map(
      (k) => firstBatch * SCHEMES_PER_BATCH + Math.floor((k * (imported * SCHEMES_PER_BATCH - 1)) / 4),
    );
    const spot = await searchSpotCheck(
      service,
      picks.map((n) => tokenOf(run, n)),
    );
    const lags = await eventLatency(db, from, to, 0);
    const importCheck: ImportCheck = {
      totalSeconds,
      ...progress,
      settled,
      searchSpotCheck: spot,
      eventLatency: lags,
    };
    console.error(
      `  $batch: import of ${progress.schemes} Schemes searchable and in the activity log after ${totalSeconds} s (${settled ? 'all' : `searchable ${progress.searchable}, recorded ${progress.recorded}`}); $search spot check ${spot.found}/${spot.checked}`,
    );

    const full = IMPORT_SCHEMES >= 100_000;
    const apiRss = importReport.rss.API;
    const rssLine = Object.entries(importReport.rss)
      .map(([label, r]) => `${label} ${r.startMiB} / ${r.peakMiB} / ${r.endMiB}`)
      .join(', ');
    const targets = [
      {
        figure: 'Companies/s, 1,000 per $batch (one atomicity group)',
        target: `≥ ${TARGETS.companiesPerSecond.toLocaleString('en')}/s`,
        measured: `${companiesReport.perSecond}/s`,
        met: companiesReport.perSecond >= TARGETS.companiesPerSecond && companiesReport.import.failedBatches === 0,
      },
      {
        figure: 'Schemes/s, 500 per $batch with Address, 2 Notes, Tag, Company link',
        target: `≥ ${TARGETS.schemesPerSecond.toLocaleString('en')}/s`,
        measured: `${schemesReport.perSecond}/s`,
        met: schemesReport.perSecond >= TARGETS.schemesPerSecond && schemesReport.import.failedBatches === 0,
      },
      {
        figure: `${progress.schemes.toLocaleString('en')} Schemes imported, searchable and in the activity log${full ? '' : ' (scaled down: not the target figure)'}`,
        target: `< ${TARGETS.importSeconds} s (100,000 Schemes)`,
        measured: `${totalSeconds} s`,
        met: full && settled && totalSeconds < TARGETS.importSeconds && importReport.import.failedBatches === 0,
      },
      {
        figure: 'RSS of the API and the workers through the import, MiB (start / peak / end)',
        target: 'flat: no growth with the entities imported',
        measured: rssLine,
        met: Object.values(importReport.rssSeries).every(flat),
      },
      {
        figure: 'API peak RSS through the import',
        target: '≤ 150 MiB',
        measured: apiRss ? `${apiRss.peakMiB} MiB` : '–',
        met: !!apiRss && apiRss.peakMiB <= 150,
      },
    ];
    return {
      clients: CLIENTS,
      companies: companiesReport,
      schemes: schemesReport,
      import: { ...importReport, ...importCheck },
      targets,
    };
  } finally {
    watch.stop();
  }
}

/** Prints the targets, the RSS and the CPU per entity of each phase. */
export function printBatchImport(report: BatchImportReport): void {
  console.log(`\n$batch imports (DESIGN §12; ${report.clients} concurrent clients)\n`);
  console.log('| figure | target | measured | |');
  console.log('| --- | --- | --: | --- |');
  for (const t of report.targets)
    console.log(`| ${t.figure} | ${t.target} | ${t.measured} | ${t.met ? 'met' : 'missed'} |`);
  const phases = [report.companies, report.schemes, report.import];
  console.log(
    '\n| phase | entities | import s | entities/s | batch p50 ms | batch p99 ms | failed batches | events done after s |',
  );
  console.log('| --- | --: | --: | --: | --: | --: | --: | --: |');
  for (const p of phases)
    console.log(
      `| ${p.phase} | ${p.entities} | ${p.import.seconds} | ${p.perSecond} | ${p.import.latencyMs.p50} | ${p.import.latencyMs.p99} | ${p.import.failedBatches} | ${p.settleSeconds} |`,
    );
  console.log('\nRSS MiB (start / peak / end of each phase)\n');
  const labels = Object.keys(report.import.rss);
  console.log(`| process | ${phases.map((p) => p.short).join(' | ')} |`);
  console.log(`| --- |${' --: |'.repeat(phases.length)}`);
  for (const label of labels)
    console.log(
      `| ${label} | ${phases
        .map((p) => {
          const r = p.rss[label];
          return r ? `${r.startMiB} / ${r.peakMiB} / ${r.endMiB}` : '–';
        })
        .join(' | ')} |`,
    );
  console.log('\nCPU per entity, ms (CPU seconds in all), import and its events\n');
  console.log(`| process | ${phases.map((p) => p.short).join(' | ')} |`);
  console.log(`| --- |${' --: |'.repeat(phases.length)}`);
  const rows = Object.keys(report.import.cpu.perProcess);
  const cell = (p: PhaseReport, label: string) => {
    const ms = p.cpu.perProcess[label];
    return ms == null ? '–' : `${ms.toFixed(3)} (${p.cpuSeconds[label]?.toFixed(1)} s)`;
  };
  // A process idle in every phase (under 5 µs per entity: the floor server) is left out.
  const idle = (ms: (p: PhaseReport) => number | null | undefined) => phases.every((p) => (ms(p) ?? 0) < 0.005);
  for (const label of rows) {
    if (idle((p) => p.cpu.perProcess[label])) continue;
    console.log(`| ${label} | ${phases.map((p) => cell(p, label)).join(' | ')} |`);
    if (!label.startsWith('Postgres')) continue;
    const clients = [...new Set(phases.flatMap((p) => Object.keys(p.cpu.postgresFor)))];
    for (const client of clients.filter((c) => !idle((p) => p.cpu.postgresFor[c])))
      console.log(
        `| … serving ${client} | ${phases.map((p) => (p.cpu.postgresFor[client] ?? 0).toFixed(3)).join(' | ')} |`,
      );
    const other = (p: PhaseReport) =>
      (p.cpu.perProcess[label] ?? 0) - Object.values(p.cpu.postgresFor).reduce((a, b) => a + b, 0);
    console.log(
      `| … other (parallel workers, autovacuum, WAL, checkpoints) | ${phases.map((p) => other(p).toFixed(3)).join(' | ')} |`,
    );
  }
  console.log(
    `| total | ${phases.map((p) => `${p.cpu.total.toFixed(3)} (${((p.cpu.total * p.entities) / 1000).toFixed(1)} s)`).join(' | ')} |`,
  );
  const i = report.import;
  console.log(
    `\nimport: ${i.schemes} Schemes, ${i.searchable} searchable, ${i.recorded} in the activity log after ${i.totalSeconds} s; ` +
      `$search spot check ${i.searchSpotCheck.found}/${i.searchSpotCheck.checked}; ` +
      `lag to search p50 ${i.eventLatency.search.p50} ms p99 ${i.eventLatency.search.p99} ms, to the activity log p50 ${i.eventLatency.activities.p50} ms p99 ${i.eventLatency.activities.p99} ms`,
  );
}
