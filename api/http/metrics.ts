import type { JobType } from 'bullmq';
import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { Gauge } from 'prom-client';
import type { ReplicaSet } from '../../db/replicas/replica-set';
import { countUnpublished } from '../../db/commands/outbox';
import { unavailable } from '../../domain/errors/domain-error';
import type { Logger } from '../../infra/logger';
import { httpRequestDuration, storeGauge, type Registry } from '../../infra/metrics/registry';
import type { Scrape } from '../../infra/metrics/metrics-server';
import type { QueueRegistry } from '../jobs/queue-registry';
import { routeLabel } from './route-label';

/** The job states `emapi_queue_jobs` reports, one sample per queue and state. */
const JOB_STATES: JobType[] = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'completed',
  'failed',
];

/**
 * The API's series (DESIGN §15): requests by route pattern, and what it reads from the stores at
 * scrape time, the jobs of every queue and the events not yet relayed from the outbox.
 */
export function registerApiMetrics(
  registry: Registry,
  deps: { knex: Knex; queues: QueueRegistry; logger: Logger; replicas?: ReplicaSet },
): void {
  const replicas = deps.replicas;
  if (replicas) {
    new Gauge({
      name: 'emapi_replica_lag_seconds',
      help: 'How far each replica was behind the primary at its last probe (absent while it is down)',
      labelNames: ['replica'],
      registers: [registry],
      collect() {
        this.reset();
        for (const replica of replicas.status()) {
          if (replica.lagMs !== null) this.set({ replica: replica.name }, replica.lagMs / 1000);
        }
      },
    });
  }
  storeGauge(
    registry,
    {
      name: 'emapi_queue_jobs',
      help: 'Jobs of each BullMQ queue by state, read at scrape time',
      labelNames: ['queue', 'state'],
      logger: deps.logger,
    },
    async () => {
      if (!deps.queues.reachable()) throw new Error('redis is not connected');
      const samples = await Promise.all(
        deps.queues.all().map(async (queue) => {
          const counts = await queue.getJobCounts(...JOB_STATES);
          return JOB_STATES.map((state) => ({ labels: { queue: queue.name, state }, value: counts[state] ?? 0 }));
        }),
      );
      return samples.flat();
    },
  );
  storeGauge(
    registry,
    {
      name: 'emapi_outbox_unpublished',
      help: 'Events committed but not yet relayed to the event queues, read at scrape time',
      logger: deps.logger,
    },
    async () => [{ value: await countUnpublished(deps.knex) }],
  );
}

/** Observes every request's duration under its route pattern, method and status. */
export function requestMetrics(registry: Registry): RequestHandler {
  const histogram = httpRequestDuration(registry);
  return (req, res, next) => {
    const end = histogram.startTimer();
    res.once('close', () => {
      end({ method: req.method, route: routeLabel(req.originalUrl), status: String(res.statusCode) });
    });
    next();
  };
}

/**
 * `GET /metrics` (Prometheus text, no token). Only the sum asked of a cluster primary can fail (it
 * did not answer in time): a 503 problem from the error handler, like any store that cannot answer.
 */
export function metricsHandler(scrape: () => Promise<Scrape>, logger: Logger): RequestHandler {
  return async (_req, res) => {
    let answer: Scrape;
    try {
      answer = await scrape();
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics scrape failed');
      throw unavailable('Metrics are not available right now.');
    }
    res.type(answer.contentType).send(answer.text);
  };
}
