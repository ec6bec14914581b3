import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../logger';
import { withinTime } from '../time-limit';

/**
 * Prometheus metrics (DESIGN §15) with prom-client. Every registry is made here, one per process
 * (or per in-process stack in tests), never prom-client's global default: a test file runs several
 * stacks in one process, and each must count only its own requests and commands.
 */

export { Registry };

/** A registry with the process defaults (CPU, memory, event loop, GC, handles). */
export function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** The metric of that name already on `registry`, or the one `make` registers there. */
function once<M>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/** Seconds, from a keyed read (a few ms) to a long `$batch` (a minute). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Seconds from the request's start to its response's end (aborted requests included). */
export function httpRequestDuration(registry: Registry): Histogram<'method' | 'route' | 'status'> {
  return once(
    registry,
    'http_request_duration_seconds',
    () =>
      new Histogram({
        name: 'http_request_duration_seconds',
        help: 'HTTP requests by method, route pattern and status',
        labelNames: ['method', 'route', 'status'],
        buckets: DURATION_BUCKETS,
        registers: [registry],
      }),
  );
}

/** Seconds a command worker spends on one command, group of a batch, or whole batch. */
export function commandDuration(registry: Registry): Histogram<'command' | 'entity' | 'outcome'> {
  return once(
    registry,
    'emapi_command_duration_seconds',
    () =>
      new Histogram({
        name: 'emapi_command_duration_seconds',
        help: 'Commands run by a command worker: create/replace/patch/delete, a $batch group, a whole $batch; outcome ok, the failure kind, or error (infrastructure)',
        labelNames: ['command', 'entity', 'outcome'],
        buckets: DURATION_BUCKETS,
        registers: [registry],
      }),
  );
}

/** Seconds from an event's commit (`occurredAt`) to its handling by an event worker. */
export function eventLag(registry: Registry): Histogram<'queue'> {
  return once(
    registry,
    'emapi_event_lag_seconds',
    () =>
      new Histogram({
        name: 'emapi_event_lag_seconds',
        help: 'Time from an event being committed to its being handled, by event queue',
        labelNames: ['queue'],
        buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
        registers: [registry],
      }),
  );
}

/** How long a scrape-time reading may take before its sample is left out. */
const COLLECT_TIMEOUT_MS = 2_000;

/**
 * A gauge read from a store at scrape time. A store that is down or slow leaves the sample out and
 * logs why; it never fails the scrape. Under one primary every process reads the same store, so
 * the cluster aggregate takes the largest reading rather than the sum.
 */
export function storeGauge<L extends string>(
  registry: Registry,
  options: { name: string; help: string; labelNames?: L[]; logger: Logger },
  read: () => Promise<{ labels?: Partial<Record<L, string>>; value: number }[]>,
): Gauge<L> {
  const { logger, ...spec } = options;
  return new Gauge<L>({
    ...spec,
    labelNames: spec.labelNames ?? [],
    aggregator: 'max',
    registers: [registry],
    async collect() {
      try {
        const samples = await withinTime(read(), COLLECT_TIMEOUT_MS, spec.name);
        this.reset();
        for (const sample of samples) {
          if (sample.labels) this.set(sample.labels, sample.value);
          else this.set(sample.value);
        }
      } catch (err) {
        // reset() would leave a gauge without labels at 0, a wrong reading: leave no sample at all.
        (this as unknown as { hashMap: object }).hashMap = {};
        logger.warn({ metric: spec.name, err: err instanceof Error ? err.message : String(err) }, 'metric left out');
      }
    },
  });
}

/** The change feed's series (GET /Changes, DESIGN §16). */
export interface ChangeFeedMetrics {
  /** Listeners dropped: `behind` past CHANGES_MAX_BUFFER_BYTES, `stalled` taking no byte for CHANGES_STALL_MS, `expired` token, `revoked` role. */
  dropped: Counter<'reason'>;
  /** Events written to listeners (one per event per listener, catch-up included). */
  sent: Counter;
}

/** Registers the change feed's series; `openListeners` is read at scrape time. */
export function changeFeedMetrics(registry: Registry, openListeners: () => number): ChangeFeedMetrics {
  new Gauge({
    name: 'emapi_changes_listeners',
    help: 'Open GET /Changes streams of this process',
    registers: [registry],
    collect() {
      this.set(openListeners());
    },
  });
  return {
    dropped: new Counter({
      name: 'emapi_changes_listeners_dropped_total',
      help: 'GET /Changes streams dropped: reason behind (more than CHANGES_MAX_BUFFER_BYTES waiting) or stalled (no byte taken for CHANGES_STALL_MS), expired (the token did), revoked (the caller lost its role)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    sent: new Counter({
      name: 'emapi_changes_events_sent_total',
      help: 'Change events written to GET /Changes streams (each event once per stream)',
      registers: [registry],
    }),
  };
}
