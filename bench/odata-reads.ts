import type autocannon from 'autocannon';
import { autocannonRun } from './bench-runs';
import { READ_SCENARIOS } from './scenarios';

/**
 * `/odata` beside the root (issue 26, DESIGN §17: the same parser, plan and SQL, only the envelope
 * differs): `BENCH_ONLY=odata`. For the keyed read, the list with nested `$expand` and the filtered
 * list with `$count`, the root's path and its `/odata` twin are driven alternately at c=1 and c=32;
 * the target is `/odata` within 10 % of the root. Then a list page with `$select` of three columns
 * against the full page, both under `/odata`: the target is the narrower page being cheaper.
 */

export interface ODataPair {
  scenario: string;
  concurrency: number;
  /** req/s of the first path (the root's, or the full page). */
  baseRps: number;
  /** req/s of the second (its `/odata` twin, or the `$select` page). */
  rps: number;
  ratio: number;
  p50: [number, number];
  errors: number;
}

export interface ODataReadsReport {
  durationSeconds: number;
  pairs: ODataPair[];
}

interface Pair {
  scenario: string;
  base: (key: string) => string;
  twin: (key: string) => string;
}

const [keyed, list, filtered] = ['keyed GET', 'list $top=60 + nested $expand', 'filtered + ordered + $count'].map(
  (name) => READ_SCENARIOS.find((s) => s.name === name)!,
);

const SELECTED = '$select=SchemeName,TotalUnits,CompletionDate';

const PAIRS: Pair[] = [
  { scenario: `${keyed!.name}: root vs /odata`, base: (k) => `/Schemes/${k}`, twin: (k) => `/odata/Schemes('${k}')` },
  { scenario: `${list!.name}: root vs /odata`, base: () => list!.path, twin: () => `/odata${list!.path}` },
  { scenario: `${filtered!.name}: root vs /odata`, base: () => filtered!.path, twin: () => `/odata${filtered!.path}` },
  {
    scenario: `/odata list $top=60: full page vs ${SELECTED}`,
    base: () => '/odata/Schemes?$top=60',
    twin: () => `/odata/Schemes?$top=60&${SELECTED}`,
  },
];

/** Requests rotating over the keys (the keyed pair), or the one path. */
function target(service: string, keys: string[], path: (key: string) => string): autocannon.Options {
  let i = 0;
  return {
    url: service,
    requests: [
      {
        setupRequest: (req: autocannon.Request) => {
          i = (i + 1) % keys.length;
          return { ...req, path: path(keys[i]!) };
        },
      } as autocannon.Request,
    ],
  };
}

export async function odataReads(opts: {
  service: string;
  /** Encoded Scheme keys for the keyed pair. */
  keys: string[];
  durationSeconds: number;
  warmupSeconds: number;
  databaseIdle: () => Promise<void>;
}): Promise<ODataReadsReport> {
  const pairs: ODataPair[] = [];
  const run = async (path: (key: string) => string, connections: number) => {
    await opts.databaseIdle();
    const options = { ...target(opts.service, opts.keys, path), connections };
    if (opts.warmupSeconds > 0) await autocannonRun({ ...options, duration: opts.warmupSeconds });
    return autocannonRun({ ...options, duration: opts.durationSeconds });
  };
  for (const pair of PAIRS) {
    for (const connections of [1, 32]) {
      // Alternating base, twin, base, twin: drift on a shared machine falls on both alike.
      const a1 = await run(pair.base, connections);
      const b1 = await run(pair.twin, connections);
      const a2 = await run(pair.base, connections);
      const b2 = await run(pair.twin, connections);
      const baseRps = Math.round((a1.requests.average + a2.requests.average) / 2);
      const rps = Math.round((b1.requests.average + b2.requests.average) / 2);
      const row: ODataPair = {
        scenario: pair.scenario,
        concurrency: connections,
        baseRps,
        rps,
        ratio: baseRps ? Number((rps / baseRps).toFixed(2)) : 0,
        p50: [Math.max(a1.latency.p50, a2.latency.p50), Math.max(b1.latency.p50, b2.latency.p50)],
        errors: [a1, b1, a2, b2].reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
      };
      pairs.push(row);
      console.error(
        `  odata c=${String(connections).padEnd(2)} ${row.scenario}: ${baseRps} vs ${rps} req/s = ${row.ratio}`,
      );
    }
  }
  return { durationSeconds: opts.durationSeconds, pairs };
}

export function printODataReads(report: ODataReadsReport): void {
  console.log(`\n/odata beside the root (${report.durationSeconds} s per run, two runs of each, alternated):`);
  console.log('| pair | c | first req/s | second req/s | second ÷ first | errors |');
  console.log('| --- | --: | --: | --: | --: | --: |');
  for (const p of report.pairs)
    console.log(`| ${p.scenario} | ${p.concurrency} | ${p.baseRps} | ${p.rps} | ${p.ratio} | ${p.errors} |`);
}
