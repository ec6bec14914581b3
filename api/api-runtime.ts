import type { Express } from 'express';
import type { Knex } from 'knex';
import { createKnex } from '../db/knex';
import { ReplicaSet } from '../db/replicas/replica-set';
import type { Logger } from '../infra/logger';
import { createRedis, quitRedis, type RedisClient } from '../infra/redis';
import type { AppConfig, MetricsPeer } from '../infra/config/load-config';
import { createApp } from './app';
import { commandBusOptionsOf, createCommandBus, type CommandBus } from './commands/command-bus';
import { createQueueRegistry, type QueueRegistry } from './jobs/queue-registry';
import { processRegistry, type Registry } from '../infra/metrics/registry';
import { isClusterChild, joinClusterMetrics } from '../infra/metrics/cluster-metrics';
import type { Scrape } from '../infra/metrics/metrics-server';
import { scrapeWithPeers } from '../infra/metrics/peer-scrapes';
import { registerApiMetrics } from './http/metrics';
import { eventLoopDelayMetric } from '../infra/metrics/event-loop-delay';
import { ChangeHub } from './changes/change-feed';

/** Everything one API process runs on, built once from its configuration. */
export interface ApiRuntime {
  app: Express;
  knex: Knex;
  redis: RedisClient;
  queues: QueueRegistry;
  commandBus: CommandBus;
  /** This runtime's metrics registry when METRICS_ENABLED (one per runtime: tests run several). */
  metrics?: Registry;
  /** GET /Changes' hub: this process's one LISTEN connection and its open streams. */
  changes: ChangeHub;
  /**
   * Ends every open change stream (each with a last comment saying why), so a closing server is not
   * held open by them: call it right after `server.close()`.
   */
  endStreams(): Promise<void>;
  /** Closes the queues, the command bus and both store connections (after the server closed). */
  close(): Promise<void>;
}

/**
 * The API's composition root, shared by `api/main.ts` and the test stack so both run the same
 * wiring: the stores, the queue handles for /Jobs and Bull Board, and the command bus, which is
 * ready (producer and events reader) before the app is returned, so writes can be served at once.
 */
export async function createApiRuntime(config: AppConfig, logger: Logger): Promise<ApiRuntime> {
  const knex = createKnex(config.databaseUrl, config.dbPoolMax, logger);
  const redis = createRedis(config.redis, 'producer');
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  // The producer connection refuses commands until it is connected (no offline queue).
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  const queues = createQueueRegistry(redis, config, logger);
  const commandBus = await createCommandBus(commandBusOptionsOf(config, redis, logger));
  const replicas = config.replicas.urls.length
    ? new ReplicaSet(knex, { ...config.replicas, poolMax: config.dbPoolMax, logger })
    : undefined;
  await replicas?.start();
  const metrics = config.metrics.enabled
    ? apiMetrics({ knex, queues, logger, replicas }, config.metrics.peers)
    : undefined;
  // The LISTEN connection goes to the primary: notifications are not relayed to replicas.
  const changes = new ChangeHub({
    ...config.changes,
    knex,
    databaseUrl: config.databaseUrl,
    logger,
    registry: metrics?.registry,
  });
  changes.start();
  // Serve streams from the first request when the database answers (it is not waited for otherwise).
  await changes.ready(2000);
  const app = createApp({ config, knex, redis, logger, queues, commandBus, metrics, replicas, changes });
  return {
    app,
    metrics: metrics?.registry,
    knex,
    redis,
    queues,
    commandBus,
    changes,
    endStreams: () => changes.close(),
    async close() {
      metrics?.stop();
      await changes.close();
      await queues.close();
      await commandBus.close();
      await Promise.allSettled([knex.destroy(), quitRedis(redis), replicas?.close()]);
    },
  };
}

/**
 * The API's registry and how `/metrics` reads it: this process's own, or under API_PROCESSES > 1
 * the sum of every process's, from the primary (infra/metrics/cluster-metrics.ts); with
 * METRICS_PEERS, merged with the peers' scrapes by process kind (infra/metrics/peer-scrapes.ts).
 */
function apiMetrics(
  deps: Parameters<typeof registerApiMetrics>[1],
  peers: MetricsPeer[],
): {
  registry: Registry;
  scrape(): Promise<Scrape>;
  stop(): void;
} {
  const registry = processRegistry();
  registerApiMetrics(registry, deps);
  const { stop } = eventLoopDelayMetric(registry);
  const own = isClusterChild()
    ? joinClusterMetrics(registry)
    : async () => ({ contentType: registry.contentType, text: await registry.metrics() });
  return { registry, scrape: peers.length ? scrapeWithPeers(own, peers, deps.logger) : own, stop };
}
