import fc from 'fast-check';
import os from 'node:os';

/**
 * The API's event loop under hostile input (issue 24; DESIGN §13: no request can hurt the
 * service). BENCH_HOSTILE_REQUESTS (10,000) fuzzed requests, BENCH_HOSTILE_CONCURRENCY (8) at a
 * time, aimed at what once held the event loop: nested and huge WKT geometry (alone, inside a
 * Scheme's MarketBoundaries, in JSON Patch values), deep and long `$filter` / `$search` /
 * `$orderby`, CSV-hostile text, and `$batch` bodies mixing all of them with the heavy expanding
 * GETs of the issue. Meanwhile another caller's `GET /Countries?$top=1` is sent every 100 ms.
 *
 * The witness is the API's own `emapi_event_loop_delay_seconds` histogram (perf_hooks'
 * monitorEventLoopDelay, exported on /metrics): scraped before and after, its p99 is read from the
 * bucket deltas. Every answer's status is counted; a 5xx is a failure of the service.
 */

export interface HostileFuzzReport {
  requests: number;
  seconds: number;
  statuses: Record<string, number>;
  serverErrors: number;
  /** The first server errors seen: what was sent (cut short) and what came back, to find their cause. */
  serverErrorSamples: { sent: string; answer: string }[];
  /** The API's event-loop delay over the run, from its own histogram (upper bucket bounds, ms). */
  eventLoopDelay: {
    samples: number;
    p50Ms: number | null;
    p99Ms: number | null;
    maxBucketMs: number | null;
    /** Seconds of the run by their longest delay: upper bucket bound (ms) → seconds in that bucket. */
    secondsByBucketMs: Record<string, number>;
  };
  /**
   * The usual reading of event-loop lag: prom-client's `nodejs_eventloop_lag_p99_seconds`, the p99
   * of every monitorEventLoopDelay sample (10 ms resolution) since the previous scrape, read every
   * WINDOW_S seconds (each scrape starts a new window). Kinder than the seconds' maxima above: a
   * 150 ms stall is one sample among hundreds in its window.
   */
  lagP99Windows: { windows: number; windowSeconds: number; medianMs: number | null; maxMs: number | null };
  /** Another caller's `GET /Countries?$top=1` every 100 ms while the fuzz ran. */
  probe: { requests: number; p50Ms: number; p99Ms: number; maxMs: number; failures: number };
  /** The machine's 1-minute load average at the start and the end (2 cores: 2 is busy). */
  loadAverage: [number, number];
}

interface Options {
  /** The API's origin (mock authentication, METRICS_ENABLED=true). */
  service: string;
  requests?: number;
  concurrency?: number;
  seed?: number;
}

interface Sent {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  contentType?: string;
  body?: string;
}

const METRIC = 'emapi_event_loop_delay_seconds';
const WINDOW_S = 10;

/** prom-client's p99 of the event-loop delay since the previous scrape (ms); null without it. */
async function scrapeLagP99(service: string): Promise<number | null> {
  const res = await fetch(`${service}/metrics`);
  const line = (await res.text()).split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_p99_seconds'));
  const value = line === undefined ? NaN : Number(line.split(' ').at(-1));
  return Number.isFinite(value) ? value * 1000 : null;
}

/** Cumulative bucket counts of the histogram by upper bound (seconds; +Inf last); empty without it. */
async function scrapeBuckets(service: string): Promise<Map<number, number>> {
  const res = await fetch(`${service}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status} (METRICS_ENABLED?)`);
  const buckets = new Map<number, number>();
  for (const line of (await res.text()).split('\n')) {
    const match = new RegExp(`^${METRIC}_bucket\\{(?:.*,)?le="([^"]+)"(?:,.*)?\\} (\\S+)`).exec(line);
    if (match) buckets.set(match[1] === '+Inf' ? Infinity : Number(match[1]), Number(match[2]));
  }
  if (buckets.size === 0) console.error(`  /metrics has no ${METRIC} histogram: the event-loop delay is not reported`);
  return buckets;
}

/** The q-quantile's bucket upper bound (ms) of the observations between two scrapes. */
function quantileMs(before: Map<number, number>, after: Map<number, number>, q: number): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return null;
  for (const bound of bounds) {
    if ((after.get(bound) ?? 0) - (before.get(bound) ?? 0) >= q * total) return bound * 1000;
  }
  return Infinity;
}

const percentile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : 0;

/** The generators: each value one request a hostile caller with a valid token could send. */
function hostileRequests(ids: { scheme: string; market: string; boundary: string }): fc.Arbitrary<Sent> {
  const nested = fc
    .integer({ min: 1, max: 6000 })
    .map((n) => `${'GEOMETRYCOLLECTION('.repeat(n)}POINT(1 1)${')'.repeat(n)}`);
  const polygon = fc.integer({ min: 3, max: 60_000 }).map((n) => {
    const points = Array.from({ length: n }, (_, i) => `${(i % 179) + 0.5} ${(i % 89) + 0.25}`);
    return `POLYGON((${points.join(',')},${points[0]}))`;
  });
  const parens = fc.integer({ min: 1, max: 200_000 }).map((n) => `POLYGON${'('.repeat(n)}1 1${')'.repeat(n)}`);
  const junk = fc.string({
    unit: fc.constantFrom('(', ')', ',', ' ', '1', '.', 'POINT', 'EMPTY', 'Z', 'M'),
    maxLength: 5000,
  });
  const geometry = fc.oneof(nested, polygon, parens, junk);

  const boundary = geometry.map((Geometry) => ({
    method: 'POST' as const,
    path: '/SchemeMarketBoundaries',
    body: { Scheme: { Id: ids.scheme }, Market: { Id: ids.market }, Geometry },
  }));
  const scheme = fc.array(geometry, { minLength: 1, maxLength: 4 }).map((geometries) => ({
    method: 'POST' as const,
    path: '/Schemes',
    body: {
      SchemeName: 'Hostile fuzz',
      MarketBoundaries: geometries.map((Geometry) => ({ Market: { Id: ids.market }, Geometry })),
    },
  }));
  const patch = geometry.map((value) => ({
    method: 'PATCH' as const,
    path: `/SchemeMarketBoundaries/${ids.boundary}`,
    body: [{ op: 'replace', path: '/Geometry', value }],
  }));
  const company = fc
    .string({ unit: fc.constantFrom('a', '"', ',', '\r', '\n', '=', '+', '-', '@', '\t', 'é'), maxLength: 200 })
    .map((Name) => ({ method: 'POST' as const, path: '/Companies', body: { Name: Name || 'x' } }));

  const filter = fc.oneof(
    fc.integer({ min: 1, max: 5000 }).map((n) => `${'('.repeat(n)}SchemeName eq 'x'${')'.repeat(n)}`),
    fc.integer({ min: 1, max: 3000 }).map((n) => `${'not '.repeat(n)}(TotalUnits gt 1)`),
    fc
      .integer({ min: 1, max: 1500 })
      .map((n) => Array.from({ length: n }, (_, i) => `TotalUnits eq ${i}`).join(' or ')),
    fc.integer({ min: 1, max: 8000 }).map((n) => `contains(SchemeName,'${'a'.repeat(n)}')`),
  );
  const search = fc.oneof(
    fc.integer({ min: 1, max: 2000 }).map((n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' OR ')),
    fc.integer({ min: 1, max: 4000 }).map((n) => `"${'ab '.repeat(n)}"`),
    fc.integer({ min: 1, max: 2000 }).map((n) => '-'.repeat(n) + 'x'),
  );
  const orderby = fc.integer({ min: 1, max: 2000 }).map((n) => Array(n).fill('Address/City desc').join(','));
  const heavyExpand =
    '$top=1000&$expand=Companies($expand=Company),Address($expand=Country),Developments,Market,BuildingType,DevelopmentType,DevelopmentStatus,Country';
  const read = fc
    .oneof(
      filter.map((f) => `$filter=${encodeURIComponent(f)}`),
      search.map((s) => `$search=${encodeURIComponent(s)}`),
      orderby.map((o) => `$orderby=${encodeURIComponent(o)}`),
      fc.constant(heavyExpand),
    )
    .map((query) => ({ method: 'GET' as const, path: `/Schemes?${query}` }));

  const single = fc.oneof(boundary, scheme, patch, company, read);
  const batch = fc.array(single, { minLength: 1, maxLength: 60 }).map((items) => ({
    method: 'POST' as const,
    path: '/$batch',
    body: {
      requests: items.map((item, i) => ({
        id: String(i + 1),
        method: item.method,
        url: item.path.slice(1),
        ...('body' in item
          ? {
              headers: {
                'content-type': item.method === 'PATCH' ? 'application/json-patch+json' : 'application/json',
              },
              body: item.body,
            }
          : {}),
      })),
    },
  }));
  return fc.oneof({ arbitrary: single, weight: 4 }, { arbitrary: batch, weight: 1 }).map((r) => {
    const body = 'body' in r ? JSON.stringify(r.body) : undefined;
    return {
      method: r.method,
      path: r.path,
      ...(body === undefined
        ? {}
        : { body, contentType: r.method === 'PATCH' ? 'application/json-patch+json' : 'application/json' }),
    };
  });
}

async function created(service: string, path: string, body: unknown): Promise<string> {
  const res = await fetch(`${service}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
  // The Id is the last segment of Location (a POST answers without a body unless asked).
  return res.headers.get('location')!.split('/').pop()!;
}

export async function hostileFuzz(options: Options): Promise<HostileFuzzReport> {
  const { service } = options;
  const total = options.requests ?? 10_000;
  const concurrency = options.concurrency ?? 8;
  const market = await created(service, '/Markets', { Name: 'Hostile fuzz market' });
  const scheme = await created(service, '/Schemes', { SchemeName: 'Hostile fuzz target' });
  const boundary = await created(service, '/SchemeMarketBoundaries', {
    Scheme: { Id: scheme },
    Market: { Id: market },
    Geometry: 'POLYGON((0 0,1 0,1 1,0 1,0 0))',
  });
  const arbitrary = hostileRequests({ scheme, market, boundary });
  const seed = options.seed ?? 20261126;
  // One request drawn at a time (seed + index): the whole set at once would hold gigabytes of geometry.
  const requestAt = (i: number) => fc.sample(arbitrary, { numRuns: 1, seed: seed + i })[0]!;

  const statuses: Record<string, number> = {};
  const serverErrorSamples: HostileFuzzReport['serverErrorSamples'] = [];
  const probeTimes: number[] = [];
  let probeFailures = 0;
  let running = true;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(`${service}/Countries?$top=1`);
        await res.arrayBuffer();
        if (res.status !== 200) probeFailures++;
      } catch {
        probeFailures++;
      }
      probeTimes.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  const load = os.loadavg()[0]!;
  const before = await scrapeBuckets(service);
  // Starts the first window now; one more scrape every WINDOW_S seconds while the fuzz runs.
  await scrapeLagP99(service);
  const lagWindows: number[] = [];
  const windowTimer = setInterval(() => {
    void scrapeLagP99(service).then((ms) => ms !== null && lagWindows.push(ms));
  }, WINDOW_S * 1000);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const r = requestAt(i);
        let status: string;
        try {
          const res = await fetch(`${service}${r.path}`, {
            method: r.method,
            headers: r.contentType ? { 'content-type': r.contentType } : {},
            ...(r.body === undefined ? {} : { body: r.body }),
          });
          const answer = await res.text();
          status = String(res.status);
          if (res.status >= 500 && serverErrorSamples.length < 10)
            serverErrorSamples.push({
              sent: `${r.method} ${r.path.slice(0, 300)} ${r.body?.slice(0, 300) ?? ''}`,
              answer: answer.slice(0, 500),
            });
        } catch (err) {
          status = `network: ${(err as Error).message}`;
        }
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await scrapeBuckets(service);
  clearInterval(windowTimer);
  running = false;
  await probe;

  const finiteBounds = [...after.keys()].filter((b) => Number.isFinite(b)).sort((a, b) => a - b);
  const grew = (b: number) => (after.get(b) ?? 0) - (before.get(b) ?? 0);
  const samples = grew(Infinity);
  // The smallest bound holding every observation of the run; null when some fell past the last bound.
  const maxBound = finiteBounds.find((b) => grew(b) === samples);
  probeTimes.sort((a, b) => a - b);
  return {
    requests: total,
    seconds: Number(seconds.toFixed(1)),
    statuses,
    serverErrorSamples,
    serverErrors: Object.entries(statuses)
      .filter(([s]) => /^5/.test(s) || s.startsWith('network'))
      .reduce((n, [, c]) => n + c, 0),
    eventLoopDelay: {
      samples,
      p50Ms: quantileMs(before, after, 0.5),
      p99Ms: quantileMs(before, after, 0.99),
      maxBucketMs: maxBound === undefined ? null : maxBound * 1000,
      secondsByBucketMs: Object.fromEntries(
        [...finiteBounds, Infinity]
          .map((b, i, all) => [String(b * 1000), grew(b) - (i === 0 ? 0 : grew(all[i - 1]!))] as const)
          .filter(([, n]) => n > 0),
      ),
    },
    lagP99Windows: {
      windows: lagWindows.length,
      windowSeconds: WINDOW_S,
      medianMs: lagWindows.length
        ? Number(
            percentile(
              [...lagWindows].sort((a, b) => a - b),
              0.5,
            ).toFixed(1),
          )
        : null,
      maxMs: lagWindows.length ? Number(Math.max(...lagWindows).toFixed(1)) : null,
    },
    probe: {
      requests: probeTimes.length,
      p50Ms: Number(percentile(probeTimes, 0.5).toFixed(1)),
      p99Ms: Number(percentile(probeTimes, 0.99).toFixed(1)),
      maxMs: Number((probeTimes.at(-1) ?? 0).toFixed(1)),
      failures: probeFailures,
    },
    loadAverage: [Number(load.toFixed(1)), Number(os.loadavg()[0]!.toFixed(1))],
  };
}

export function printHostileFuzz(r: HostileFuzzReport): void {
  const statuses = Object.entries(r.statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  console.log(
    `hostile fuzz: ${r.requests} requests in ${r.seconds} s (${statuses}); ${r.serverErrors} 5xx/network errors; ` +
      `API event-loop delay p50 ≤ ${r.eventLoopDelay.p50Ms} ms, p99 ≤ ${r.eventLoopDelay.p99Ms} ms, max ≤ ${r.eventLoopDelay.maxBucketMs ?? '> last bucket'} ms (${r.eventLoopDelay.samples} samples); ` +
      `another caller's GET /Countries?$top=1: p50 ${r.probe.p50Ms} ms, p99 ${r.probe.p99Ms} ms, max ${r.probe.maxMs} ms, ${r.probe.failures} failures of ${r.probe.requests}; ` +
      `load average ${r.loadAverage.join(' → ')}`,
  );
  const seconds = Object.entries(r.eventLoopDelay.secondsByBucketMs).map(([le, n]) => `≤${le} ms: ${n}`);
  console.log(`  seconds by their longest event-loop delay: ${seconds.join(', ')}`);
  const w = r.lagP99Windows;
  console.log(
    `  p99 of all event-loop delay samples per ${w.windowSeconds} s window (prom-client nodejs_eventloop_lag_p99_seconds): ` +
      `median ${w.medianMs} ms, worst ${w.maxMs} ms over ${w.windows} windows`,
  );
  for (const sample of r.serverErrorSamples) console.log(`  5xx: ${sample.sent}\n    → ${sample.answer}`);
}
