import { readFileSync } from 'node:fs';
import os from 'node:os';
import type pg from 'pg';
import { autocannonRun } from './bench-runs';
import { listStatements, keyedStatement, type Statement } from './scenarios';

/**
 * The scale run of issue 27 (`BENCH_ONLY=scale`): the read shapes whose cost could grow with the
 * table, each at c=1 and c=32 against the running service, on whatever data set the bench database
 * holds (100k, 1M, 10M schemes: `npm run bench -- --schemes N`). The targets: p50 ≤ 20 ms at c=1,
 * within 2× of the 100k figure (keyed GET 1.2×). `BENCH_SCALE_BASELINE=<results file>` names an
 * earlier run (another size) to put beside this one. Every shape whose c=1 p50 misses 20 ms gets
 * the EXPLAIN (ANALYZE, BUFFERS) of the statements the service runs for it, in the results.
 */

export interface ScaleShape {
  name: string;
  /** Query options as the service receives them; absent for the keyed read. */
  query?: Record<string, string>;
  /** `/Schemes/$count` rather than the list. */
  countOnly?: boolean;
}

/** Scheme fields `$orderby` may name: every scalar one (DESIGN §5), each answered from a `(column, id)` index. */
const ORDERABLE = ['SchemeName', 'TotalUnits', 'TotalFloorArea', 'CompletionDate', 'CreatedAt', 'UpdatedAt'];

export const SCALE_SHAPES: ScaleShape[] = [
  { name: 'keyed GET' },
  { name: 'list $top=60 + nested $expand', query: { $top: '60', $expand: 'Address($expand=Country),Companies' } },
  // 'park' is in one scheme name in 15 and one street in 12; 'planning' in about half the schemes
  // (their notes: 1.5 a scheme of 4-12 words out of 16); 'juniper wharf' (both words) in one scheme
  // in ~360: a common, a very common and a rare search.
  { name: '$search=park $top=60', query: { $search: 'park', $top: '60' } },
  { name: '$search=park $top=60 $count', query: { $search: 'park', $top: '60', $count: 'true' } },
  { name: '$search=planning $top=60', query: { $search: 'planning', $top: '60' } },
  { name: '$search=planning $top=60 $count', query: { $search: 'planning', $top: '60', $count: 'true' } },
  { name: '$search=juniper wharf $top=60', query: { $search: 'juniper wharf', $top: '60' } },
  {
    name: 'contains(SchemeName) + BuildingType + $orderby + $count',
    query: {
      $filter: "contains(SchemeName,'Park') and BuildingType/Name eq 'Office'",
      $orderby: 'SchemeName',
      $count: 'true',
      $top: '60',
    },
  },
  {
    name: 'contains(SchemeName) $count',
    query: { $filter: "contains(SchemeName,'Park')", $count: 'true', $top: '60' },
  },
  {
    name: "Address/City eq 'Leeds' $count",
    query: { $filter: "Address/City eq 'Leeds'", $count: 'true', $top: '60' },
  },
  ...ORDERABLE.flatMap((field) =>
    ['asc', 'desc'].map((direction) => ({
      name: `$orderby=${field} ${direction}`,
      query: { $orderby: `${field} ${direction}`, $top: '60' },
    })),
  ),
  { name: '$count of the set', query: { $count: 'true', $top: '0' } },
  { name: '/Schemes/$count', query: {}, countOnly: true },
  { name: '$skip=50000', query: { $skip: '50000', $top: '60', $expand: 'Address' } },
];

export interface ScaleRow {
  shape: string;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Requests answered in the measured run (0: none finished within it). */
  requests: number;
}

export interface ScaleReport {
  schemes: number;
  durationSeconds: number;
  rows: ScaleRow[];
  /** The machine's 1-minute load average at the start and the end (2 cores: above 2, the run shared them). */
  loadAverage: [number, number];
  /** Shapes whose c=1 p50 missed 20 ms: the plans of the statements the service ran for them. */
  explains: { shape: string; plans: string[] }[];
  /** What each counting shape answered: the count, and whether it stopped at COUNT_LIMIT. */
  counts: { shape: string; count: string | null; limited: boolean }[];
}

/** The p50 target at c=1 (issue 27). */
const P50_TARGET_MS = 20;

function pathOf(shape: ScaleShape): string {
  if (shape.countOnly) return '/Schemes/$count';
  return `/Schemes?${new URLSearchParams(shape.query ?? {}).toString()}`;
}

function statementsOf(shape: ScaleShape, key: number): Statement[] {
  if (!shape.query) return [keyedStatement(key)];
  const { page, count } = listStatements(shape.countOnly ? { $count: 'true', $top: '0' } : shape.query);
  return shape.countOnly && count ? [count] : [page, ...(count ? [count] : [])];
}

async function explain(db: pg.Pool, statement: Statement): Promise<string> {
  // The service's statements use knex's `?` placeholders; pg wants `$n`.
  let n = 0;
  const sql = statement.sql.replace(/\?/g, () => `$${++n}`);
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${sql}`, statement.params);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

export async function scaleReads(opts: {
  service: string;
  db: pg.Pool;
  schemes: number;
  /** Rotating keyed-read paths (the keyed shape) and one key for its plan. */
  keyedRequests: import('autocannon').Request[];
  planKey: number;
  durationSeconds: number;
  warmupSeconds: number;
  /**
   * Resolves once the database runs none of the service's statements: a client that gave up on a
   * request leaves it running (up to STATEMENT_TIMEOUT_MS), and 32 of them would be the next run's load.
   */
  databaseIdle: () => Promise<void>;
}): Promise<ScaleReport> {
  const rows: ScaleRow[] = [];
  const explains: ScaleReport['explains'] = [];
  const loadAtStart = os.loadavg()[0]!;
  const counts: ScaleReport['counts'] = [];
  for (const shape of SCALE_SHAPES.filter((s) => s.countOnly || s.query?.$count)) {
    const res = await fetch(`${opts.service}${pathOf(shape)}`);
    const count = shape.countOnly ? await res.text() : res.headers.get('x-total-count');
    counts.push({ shape: shape.name, count, limited: res.headers.get('x-total-count-limit-exceeded') === 'true' });
    if (!shape.countOnly) await res.arrayBuffer();
  }
  for (const shape of SCALE_SHAPES) {
    for (const connections of [1, 32]) {
      const keyed = !shape.query;
      const target = keyed
        ? { url: opts.service, requests: opts.keyedRequests }
        : { url: `${opts.service}${pathOf(shape)}` };
      await opts.databaseIdle();
      if (opts.warmupSeconds > 0) await autocannonRun({ ...target, connections, duration: opts.warmupSeconds });
      await opts.databaseIdle();
      const r = await autocannonRun({ ...target, connections, duration: opts.durationSeconds });
      const row = {
        shape: shape.name,
        concurrency: connections,
        rps: Math.round(r.requests.average),
        p50: r.latency.p50,
        p99: r.latency.p99,
        errors: r.errors + r.timeouts + r.non2xx,
        requests: r.requests.total,
      };
      rows.push(row);
      console.error(
        `  scale c=${String(connections).padEnd(2)} ${shape.name}: ${row.rps} req/s p50 ${row.p50} ms p99 ${row.p99} ms errors ${row.errors}`,
      );
      if (connections === 1 && row.p50 > P50_TARGET_MS) {
        const plans = [];
        for (const statement of statementsOf(shape, opts.planKey)) plans.push(await explain(opts.db, statement));
        explains.push({ shape: shape.name, plans });
      }
    }
  }
  const loadAverage: [number, number] = [Number(loadAtStart.toFixed(1)), Number(os.loadavg()[0]!.toFixed(1))];
  return { schemes: opts.schemes, durationSeconds: opts.durationSeconds, loadAverage, rows, explains, counts };
}

/** The table of bench/README.md: this run beside a baseline run of another size, when one is named. */
export function printScaleReads(report: ScaleReport, baselineFile?: string): void {
  const baseline = baselineFile
    ? (JSON.parse(readFileSync(baselineFile, 'utf8')) as { scale?: ScaleReport }).scale
    : undefined;
  const before = new Map(baseline?.rows.map((r) => [`${r.shape}|${r.concurrency}`, r]));
  const at = (rows: ScaleRow[], shape: string, c: number) => rows.find((r) => r.shape === shape && r.concurrency === c);
  console.log(
    `\nScale run at ${report.schemes} schemes${baseline ? ` beside ${baseline.schemes}` : ''} (${report.durationSeconds} s per run, load ${report.loadAverage.join(' → ')}): req/s c=1 / c=32, p50 c=1 ms`,
  );
  console.log(
    baseline
      ? `| shape | ${baseline.schemes}: req/s | p50 | ${report.schemes}: req/s | p50 | p50 ratio | target met |`
      : '| shape | req/s | p50 c=1 | p99 c=1 | p50 c=32 | target met |',
  );
  console.log(baseline ? '| --- | --: | --: | --: | --: | --: | --- |' : '| --- | --: | --: | --: | --: | --- |');
  for (const shape of SCALE_SHAPES) {
    const one = at(report.rows, shape.name, 1);
    const many = at(report.rows, shape.name, 32);
    if (!one || !many) continue;
    const old1 = before.get(`${shape.name}|1`);
    const old32 = before.get(`${shape.name}|32`);
    // autocannon's p50 is whole milliseconds: a 0 ms baseline counts as 1 ms.
    const ratio = old1 ? one.p50 / Math.max(1, old1.p50) : undefined;
    const allowed = shape.query ? 2 : 1.2;
    // autocannon's latencies are whole milliseconds: a 1 ms figure at 100k allows 2 ms (1.2 ms keyed).
    const met =
      one.requests > 0 &&
      one.errors === 0 &&
      one.p50 <= P50_TARGET_MS &&
      (ratio === undefined || one.p50 <= Math.max(1, old1!.p50) * allowed);
    console.log(
      baseline && old1 && old32
        ? `| ${shape.name} | ${old1.rps} / ${old32.rps} | ${old1.p50} | ${one.rps} / ${many.rps} | ${one.p50} | ${ratio?.toFixed(2) ?? '–'} | ${met ? 'yes' : '**no**'} |`
        : `| ${shape.name} | ${one.rps} / ${many.rps} | ${one.p50} | ${one.p99} | ${many.p50} | ${met ? 'yes' : '**no**'} |`,
    );
  }
  console.log(
    `\nCounts answered: ${report.counts.map((c) => `${c.shape}: ${c.count}${c.limited ? ' (stopped at COUNT_LIMIT)' : ''}`).join('; ')}`,
  );
  for (const e of report.explains)
    console.log(`\nEXPLAIN of "${e.shape}" (missed ${P50_TARGET_MS} ms at c=1):\n${e.plans.join('\n---\n')}`);
}
