import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { Logger } from '../db/infra/logger';
import type { AppConfig } from '../domain/config/load-config';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { requestIdFor } from './http/request-id';
import { healthRoutes } from './health/health.routes';
import { entityReadRoutes } from './entities/entity-read.routes';

export interface AppDeps {
  config: AppConfig;
  knex: Knex;
  redis: Redis;
  logger: Logger;
}

/** Builds the HTTP application; no listening, no process handling (that is main.ts). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // entity ETags come from row versions, not body hashes
  app.set('query parser', 'simple');

  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: requestIdFor,
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug',
      autoLogging: { ignore: (req) => req.url?.startsWith('/health/') ?? false },
    }),
  );
  app.use(healthRoutes(deps.knex, deps.redis));
  app.use(
    express.json({
      limit: '1mb',
      strict: false, // a non-array PATCH body must reach the route to get its own 400 (spec 4.3)
      type: ['application/json', 'application/json-patch+json', 'application/*+json'],
    }),
  );
  app.use(entityReadRoutes({ knex: deps.knex, maxTop: deps.config.maxTop }));

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
