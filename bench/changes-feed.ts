import autocannon from 'autocannon';
import { request } from 'node:http';
import type pg from 'pg';
import { decodeId } from '../domain/ids/id-codec';
import type { RssSampler } from './process-rss';

/**
 * GET /Changes at scale (issue 16): BENCH_CHANGES_LISTENERS (1,000) streams open on one API process
 * while POSTs arrive at BENCH_CHANGES_RATE a second for BENCH_CHANGES_SECONDS. Counts what each
 * stream received against the activity log (every change must reach every stream), the API's peak
 * RSS, and the latency to each stream of each event: from the write's commit (the entry's
 * OccurredAt, the command's transaction time) and from the entry's own insert (its `recorded_at`),
 * so the feed's share (NOTIFY → one query → fan-out) is apart from the event pipeline's. The
 * listeners live in the bench process (one core of two is theirs and autocannon's).
 */

export interface ChangesFeedReport {
  listeners: number;
  opened: number;
  postsPerSecond: number;
  seconds: number;
  /** Entries recorded during the run (the activity log). */
  entries: number;
  /** Streams that received every entry exactly once, in id order. */
  complete: number;
  /** Fewest and most events a stream received. */
  minReceived: number;
  maxReceived: number;
  apiPeakRssMiB: number;
  apiRssBeforeMiB: number;
  /** ms from the write's commit (OccurredAt) to each stream, over every (stream, event). */
  fromCommit: { p50: number; p99: number; max: number };
  /** ms from the entry's insert (recorded_at) to each stream. */
  fromInsert: { p50: number; p99: number; max: number };
  /**
   * ms from the entry's insert to the first stream that had it: the feed's own latency, with less
   * of the bench process's (one thread parsing every stream) in it.
   */
  firstFromInsert: { p50: number; p99: number; max: number };
  /** Drops reported by the API's /metrics after the run (slow listeners: expected 0). */
  dropped: number;
}

interface Listener {
  close: () => void;
  ids: number[];
  arrivals: number[];
  ended: boolean;
}

function listen(service: string): Promise<Listener> {
  return new Promise((resolve, reject) => {
    const listener: Listener = { close: () => req.destroy(), ids: [], arrivals: [], ended: false };
    const req = request(`${service}/Changes`, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET /Changes answered ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let pending = '';
      let started = false;
      res.on('data', (chunk: string) => {
        const now = Date.now();
        pending += chunk;
        let end: number;
        while ((end = pending.indexOf('\n\n')) !== -1) {
          const frame = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (frame.startsWith('retry:') && !started) {
            started = true;
            resolve(listener);
          } else if (frame.startsWith('id: ')) {
            listener.ids.push(decodeId('Activity', frame.slice(4, 10)) ?? -1);
            listener.arrivals.push(now);
          }
        }
      });
      res.on('close', () => (listener.ended = true));
    });
    req.on('error', reject);
    req.end();
  });
}

function percentiles(values: Float64Array): { p50: number; p99: number; max: number } {
  const sorted = values.slice().sort();
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  return { p50: at(0.5), p99: at(0.99), max: Math.round(sorted[sorted.length - 1] ?? 0) };
}

async function droppedCount(service: string): Promise<number> {
  const res = await fetch(`${service}/metrics`).catch(() => undefined);
  if (!res?.ok) return -1;
  const line = (await res.text()).split('\n').find((l) => l.startsWith('emapi_changes_listeners_dropped_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

export async function changesFeed(options: {
  db: pg.Pool;
  service: string;
  rss: RssSampler;
  eventsDrained: () => Promise<void>;
}): Promise<ChangesFeedReport> {
  const listenersWanted = Number(process.env.BENCH_CHANGES_LISTENERS ?? 1000);
  const rate = Number(process.env.BENCH_CHANGES_RATE ?? 100);
  const seconds = Number(process.env.BENCH_CHANGES_SECONDS ?? 20);
  const { db, service, rss } = options;
  const rssBefore = rss.currentMiB();
  const peak = rss.window();
  const start = (await db.query<{ id: number | null }>('select max(id) as id from activities')).rows[0]!.id ?? 0;

  const listeners: Listener[] = [];
  for (let i = 0; i < listenersWanted; i += 100) {
    const batch = await Promise.allSettled(
      Array.from({ length: Math.min(100, listenersWanted - i) }, () => listen(service)),
    );
    for (const result of batch) if (result.status === 'fulfilled') listeners.push(result.value);
  }
  console.error(
    `  /Changes: ${listeners.length} of ${listenersWanted} streams open; POSTs at ${rate}/s for ${seconds} s`,
  );

  const posts = await new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      {
        url: `${service}/Schemes`,
        // Enough connections for the rate to be reached while each POST awaits its command.
        connections: 32,
        overallRate: rate,
        duration: seconds,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ SchemeName: 'Changes feed [<id>]' }),
        idReplacement: true,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    ),
  );
  await options.eventsDrained();
  const entries = (
    await db.query<{ id: number; occurred: number; recorded: number }>(
      `select id, extract(epoch from occurred_at) * 1000 as occurred, extract(epoch from recorded_at) * 1000 as recorded
       from activities where id > $1 order by id`,
      [start],
    )
  ).rows;
  // Until every stream has every entry (or 60 s more).
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && listeners.some((l) => l.ids.length < entries.length && !l.ended)) {
    await new Promise((r) => setTimeout(r, 200));
  }
  const apiPeakRssMiB = peak();
  const dropped = await droppedCount(service);
  for (const listener of listeners) listener.close();

  const expected = entries.map((e) => e.id).join(',');
  const byId = new Map(entries.map((e) => [e.id, e]));
  let complete = 0;
  let samples = 0;
  for (const l of listeners) samples += l.ids.length;
  const fromCommit = new Float64Array(samples);
  const fromInsert = new Float64Array(samples);
  let n = 0;
  const first = new Map<number, number>();
  for (const l of listeners) {
    if (l.ids.join(',') === expected) complete++;
    l.ids.forEach((id, i) => {
      const entry = byId.get(id);
      if (!entry) return;
      fromCommit[n] = l.arrivals[i]! - Number(entry.occurred);
      fromInsert[n] = l.arrivals[i]! - Number(entry.recorded);
      n++;
      first.set(id, Math.min(first.get(id) ?? Infinity, l.arrivals[i]!));
    });
  }
  const counts = listeners.map((l) => l.ids.length);
  return {
    listeners: listenersWanted,
    opened: listeners.length,
    postsPerSecond: Math.round(posts.requests.average),
    seconds,
    entries: entries.length,
    complete,
    minReceived: Math.min(...counts),
    maxReceived: Math.max(...counts),
    apiPeakRssMiB,
    apiRssBeforeMiB: Math.round(rssBefore),
    fromCommit: percentiles(fromCommit.subarray(0, n)),
    fromInsert: percentiles(fromInsert.subarray(0, n)),
    firstFromInsert: percentiles(Float64Array.from([...first].map(([id, at]) => at - Number(byId.get(id)!.recorded)))),
    dropped,
  };
}

export function printChangesFeed(r: ChangesFeedReport): void {
  console.log(
    `GET /Changes: ${r.opened}/${r.listeners} streams on one API process, ${r.postsPerSecond} POST/s for ${r.seconds} s: ` +
      `${r.entries} entries, ${r.complete} streams got every one in order (received ${r.minReceived}–${r.maxReceived}), dropped ${r.dropped}; ` +
      `latency from commit p50 ${r.fromCommit.p50} ms p99 ${r.fromCommit.p99} ms max ${r.fromCommit.max} ms, ` +
      `from the entry's insert p50 ${r.fromInsert.p50} ms p99 ${r.fromInsert.p99} ms (to the first stream p50 ${r.firstFromInsert.p50} ms p99 ${r.firstFromInsert.p99} ms); API RSS ${r.apiRssBeforeMiB} MiB before, peak ${r.apiPeakRssMiB} MiB`,
  );
}
