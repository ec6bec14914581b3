import type { Express } from 'express';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import { createKnex } from '../db/knex';
import type { Logger } from '../infra/logger';
import { createRedis } from '../infra/redis';
import type { AppConfig } from '../infra/config/load-config';
import { createApp } from './app';
import { commandBusOptionsOf, createCommandBus, type CommandBus } from './commands/command-bus';
import { createQueueRegistry, type QueueRegistry } from './jobs/queue-registry';

/** Everything one API process runs on, built once from its configuration. */
export interface ApiRuntime {
  app: Express;
  knex: Knex;
  redis: Redis;
  queues: QueueRegistry;
  commandBus: CommandBus;
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
  const redis = createRedis(config.redisUrl, 'producer');
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  // The producer connection refuses commands until it is connected (no offline queue).
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  const queues = createQueueRegistry(redis, config.queuePrefix, logger);
  const commandBus = await createCommandBus(commandBusOptionsOf(config, redis, logger));
  const app = createApp({ config, knex, redis, logger, queues, commandBus });
  return {
    app,
    knex,
    redis,
    queues,
    commandBus,
    async close() {
      await queues.close();
      await commandBus.close();
      await Promise.allSettled([knex.destroy(), redis.quit()]);
    },
  };
}
