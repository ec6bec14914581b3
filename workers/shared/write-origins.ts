import { isWriteOrigin, type WriteOrigin } from '../../domain/commands/write-origin';
import { burstOrigins, type EventBurstData } from '../../domain/queues/job-registry';
import type { TraceCarrier } from '../../infra/tracing/tracing-types';

/**
 * What a worker makes of the origins of the writes it handles (domain/commands/write-origin.ts):
 * the request ids its log lines name, and the trace contexts its spans follow or link to.
 */

type Origins = readonly (WriteOrigin | null | undefined)[];

/**
 * The log fields naming the writes' requests: `requestId` when the work is one request's (a
 * command, a burst of one write's events), `requestIds` (distinct, in order) when it is several's.
 */
export function requestFields(origins: Origins): { requestId?: string; requestIds?: string[] } {
  const ids = [...new Set(origins.flatMap((origin) => (origin?.requestId ? [origin.requestId] : [])))];
  if (ids.length === 0) return {};
  return ids.length === 1 ? { requestId: ids[0]! } : { requestIds: ids };
}

/** The distinct trace contexts of the writes, in order: the first is the parent, the others links. */
export function traceContexts(origins: Origins): TraceCarrier[] {
  const seen = new Set<string>();
  const traces: TraceCarrier[] = [];
  for (const origin of origins) {
    if (!origin?.traceparent || seen.has(origin.traceparent)) continue;
    seen.add(origin.traceparent);
    traces.push({
      traceparent: origin.traceparent,
      ...(origin.tracestate === undefined ? {} : { tracestate: origin.tracestate }),
    });
  }
  return traces;
}

/** The request fields of any job's data: a command's or batch's origin, a burst's origins; none otherwise. */
export function requestFieldsOfJob(data: unknown): { requestId?: string; requestIds?: string[] } {
  if (data === null || typeof data !== 'object') return {};
  const { origin, events } = data as { origin?: unknown; events?: unknown };
  if (isWriteOrigin(origin)) return requestFields([origin]);
  if (Array.isArray(events)) return requestFields(burstOrigins(data as EventBurstData));
  return {};
}
