import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type pg from 'pg';
import { Scheme } from '../domain/entities';

/**
 * Webhook delivery latency at the sustained POST rate (DESIGN §16: a delivery within 1 s p99 of
 * commit): one subscription to a receiver in this process, POSTs of Schemes for the run, and for
 * each Scheme the time from its row's `created_at` (the command transaction's start, as
 * bench/event-latency.ts measures) to its `SchemeCreated` webhook reaching the receiver. The
 * receiver answers 204 at once and counts duplicates (at-least-once: there should be none).
 */

export interface WebhookLatency {
  writesPerSecond: number;
  schemes: number;
  delivered: number;
  duplicates: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  /** What the webhook stage adds: from the activity entry's `recorded_at` to the arrival (p50, p99). */
  afterActivity: { p50: number | null; p99: number | null };
  /** How long after the last POST every delivery had arrived (or the deadline passed). */
  settledAfterMs: number;
  /** The machine's 1-minute load average at the start and the end of the run (2 cores: 2 is busy). */
  loadAverage: [number, number];
}

interface Options {
  db: pg.Pool;
  /** The API's origin. */
  service: string;
  /** Drives the POSTs of Schemes named `Webhook …`; answers the average req/s and when the last POST was answered. */
  drive: () => Promise<{ writesPerSecond: number; endedAt: number }>;
  timeoutMs?: number;
}

const percentile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : null;

export async function webhookLatency(options: Options): Promise<WebhookLatency> {
  const arrivals = new Map<string, number>();
  let duplicates = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(204).end();
      const entityId = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { EntityId: string } }).data.EntityId;
      if (arrivals.has(entityId)) duplicates++;
      else arrivals.set(entityId, at);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bench`;
  const created = await fetch(`${options.service}/Subscriptions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ Url: url, Events: ['SchemeCreated'], Description: 'benchmark receiver' }),
  });
  if (created.status !== 201)
    throw new Error(`POST /Subscriptions answered ${created.status}: ${await created.text()}`);
  const { Id } = (await created.json()) as { Id: string };
  try {
    const mark =
      (await options.db.query<{ id: number | null }>(`select max(id) as id from ${Scheme.table}`)).rows[0]!.id ?? 0;
    const load = os.loadavg()[0]!;
    const { writesPerSecond, endedAt: ended } = await options.drive();
    const { rows } = await options.db.query<{ encoded_id: string; created: number }>(
      `select encoded_id, extract(epoch from created_at) * 1000 as created from ${Scheme.table}
       where id > $1 and scheme_name like 'Webhook %'`,
      [mark],
    );
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    while (rows.some((r) => !arrivals.has(r.encoded_id)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const settledAfterMs = Math.max(...rows.map((r) => arrivals.get(r.encoded_id) ?? Date.now())) - ended;
    const lags = rows
      .filter((r) => arrivals.has(r.encoded_id))
      .map((r) => arrivals.get(r.encoded_id)! - Number(r.created))
      .sort((a, b) => a - b);
    const { rows: recorded } = await options.db.query<{ entity_id: string; recorded: number }>(
      `select a.entity_id, extract(epoch from a.recorded_at) * 1000 as recorded
       from ${Scheme.table} r join activities a on a.entity_type = $2 and a.entity_id = r.encoded_id and a.event_type = $3
       where r.id > $1 and r.scheme_name like 'Webhook %'`,
      [mark, Scheme.name, `${Scheme.name}Created`],
    );
    const afterActivity = recorded
      .filter((r) => arrivals.has(r.entity_id))
      .map((r) => arrivals.get(r.entity_id)! - Number(r.recorded))
      .sort((a, b) => a - b);
    return {
      writesPerSecond,
      afterActivity: { p50: percentile(afterActivity, 0.5), p99: percentile(afterActivity, 0.99) },
      schemes: rows.length,
      delivered: lags.length,
      duplicates,
      p50: percentile(lags, 0.5),
      p99: percentile(lags, 0.99),
      max: lags.at(-1) ?? null,
      settledAfterMs,
      loadAverage: [Number(load.toFixed(1)), Number(os.loadavg()[0]!.toFixed(1))],
    };
  } finally {
    await fetch(`${options.service}/Subscriptions/${Id}`, { method: 'DELETE' });
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
