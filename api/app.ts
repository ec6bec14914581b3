import express, { type Express } from 'express';
import type { Knex } from 'knex';
import type { ReplicaSet } from '../db/replicas/replica-set';
import { readSettingsOf } from '../db/query/read-operation';
import type { RedisClient } from '../infra/redis';
import type { Logger } from '../infra/logger';
import type { AppConfig } from '../infra/config/load-config';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { MAX_REQUEST_BODY_BYTES } from './http/request-body-limit';
import { requestLogger } from './http/request-logger';
import { corsPolicy } from './http/cors';
import { apiSecurityHeaders, bullBoardSecurityHeaders } from './http/security-headers';
import { rateLimit } from './limits/rate-limit';
import { exportSlots } from './limits/export-slots';
import { healthHandlers } from './health/health.routes';
import { entityReadHandlers } from './entities/entity-read.routes';
import { authenticate } from './auth/authenticate';
import { cachedRoleGrants } from './auth/role-grants';
import { bullBoardLogin, unlessSessionCaller } from './auth/login/bull-board-login';
import { rolesHandlers } from './roles/roles.routes';
import { jobsHandlers } from './jobs/jobs.routes';
import { bullBoardRouter } from './jobs/bull-board';
import type { QueueRegistry } from './jobs/queue-registry';
import { exportConcurrencyFor, exportHandler } from './export/export.routes';
import { entityWriteHandlers } from './entities/entity-write.routes';
import { commandHandler } from './commands/command.routes';
import { batchHandler } from './batch/batch.routes';
import type { CommandBus } from './commands/command-bus';
import { patchLimitsOf } from '../infra/config/patch-limits';
import { geometryLimitsOf } from '../infra/config/geometry-limits';
import type { Registry } from '../infra/metrics/registry';
import type { Scrape } from '../infra/metrics/metrics-server';
import { metricsHandler, requestMetrics } from './http/metrics';
import { openApiHandlers } from './openapi/openapi.routes';
import type { ChangeHub } from './changes/change-feed';
import { changesHandler } from './changes/changes.routes';
import { subscriptionHandlers } from './webhooks/subscriptions.routes';
import { BULL_BOARD_PATH, ROUTES } from './routes/route-table';
import { dispatcher } from './routes/dispatch';
import { odataProtocol } from './http/odata-root';
import { metadataHandlers } from './odata/metadata.routes';
import { odataReadHandlers } from './odata/odata-read.routes';
import { odataWriteHandlers } from './odata/odata-write.routes';

export interface AppDeps {
  config: AppConfig;
  knex: Knex;
  redis: RedisClient;
  logger: Logger;
  /** BullMQ queues for /Jobs and Bull Board (api/jobs/queue-registry.ts). */
  queues: QueueRegistry;
  /** The producer of the `commands` queue, ready before the app serves (api/commands/command-bus.ts). */
  commandBus: CommandBus;
  /** Hot standbys the reads go to (DATABASE_REPLICA_URLS), probed by the runtime. */
  replicas?: ReplicaSet;
  /** With METRICS_ENABLED: the registry requests are counted in, and what `GET /metrics` answers. */
  metrics?: { registry: Registry; scrape(): Promise<Scrape> };
  /** GET /Changes' hub (api/changes/change-feed.ts), started by the runtime. */
  changes: ChangeHub;
}

/**
 * Builds the HTTP application; no listening, no process handling (that is main.ts). Every route is
 * an entry of the route table (api/routes/route-table.ts); this file supplies their handlers and
 * the middleware around them, in order: request metrics, access log, security headers, CORS; the
 * open routes; authentication, rate limit; `$batch` (its own body limit); the JSON body parser;
 * every other route under its policy; 404 and the one error writer.
 */
export function createApp(deps: AppDeps): Express {
  const app = express();
  const limits = deps.config.limits;
  const readLimits = { ...limits, maxTop: deps.config.maxTop };
  app.disable('x-powered-by');
  app.set('etag', false); // entity ETags come from row versions, not body hashes
  app.set('query parser', 'simple');

  if (deps.metrics) app.use(requestMetrics(deps.metrics.registry));
  app.use(
    requestLogger(deps.logger, {
      ignore: (url) => url.startsWith('/health/') || url === '/metrics',
      accessLog: deps.config.accessLog,
    }),
  );
  app.use(apiSecurityHeaders());
  app.use(odataProtocol());
  // Before authentication: a browser's preflight carries no token (CORS_ORIGINS; off by default).
  const corsHandler = corsPolicy(deps.config.corsOrigins);
  if (corsHandler) app.use(corsHandler);

  const grants = cachedRoleGrants(deps.knex);
  const verify = authenticate(deps.config.auth, grants);
  // Bull Board's OIDC login (DESIGN §15): its routes, and its session cookie as a caller of its own.
  const login = deps.config.bullBoardLogin
    ? bullBoardLogin({
        config: deps.config.bullBoardLogin,
        basePath: BULL_BOARD_PATH,
        rolesClaim: deps.config.auth.rolesClaim,
        grants,
        logger: deps.logger,
      })
    : undefined;
  const storeError = (err: unknown) =>
    deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'redis unavailable for a limit');
  const rateLimiter = rateLimit({
    redis: deps.redis,
    perMinute: limits.rateLimitPerMinute,
    prefix: deps.config.queuePrefix,
    onStoreError: storeError,
  });
  const commandWrites = {
    knex: deps.knex,
    commandBus: deps.commandBus,
    commandTimeoutMs: deps.config.commandTimeoutMs,
  };

  const readSettings = readSettingsOf({ maxTop: deps.config.maxTop, limits: deps.config.limits });
  const routes = dispatcher(ROUTES, {
    // Without METRICS_ENABLED `/metrics` is not served: a 404 like any unknown route.
    ...healthHandlers(deps.knex, deps.redis, deps.replicas),
    ...(deps.metrics ? { metrics: metricsHandler(deps.metrics.scrape, deps.logger) } : {}),
    ...openApiHandlers({ maxTop: deps.config.maxTop, batchMaxRequests: deps.config.batch.maxRequests }),
    ...login?.handlers,
    bullBoard: [
      bullBoardSecurityHeaders(),
      bullBoardRouter(deps.queues, { readOnly: deps.config.bullBoardReadOnly, logoutPath: login?.logoutPath }),
    ],
    batch: batchHandler({
      knex: deps.knex,
      commandBus: deps.commandBus,
      chargeBatch: rateLimiter.chargeBatch,
      patchLimits: patchLimitsOf(deps.config),
      readLimits: readSettings.limits,
      geometryLimits: geometryLimitsOf(deps.config),
      limits: deps.config.batch,
      queryTokensRefused: !deps.config.auth.mock,
      consistencyTokens: deps.replicas !== undefined,
    }),
    ...rolesHandlers({ knex: deps.knex, grants }),
    ...subscriptionHandlers({
      ...commandWrites,
      webhooks: deps.config.webhooks,
      maxTop: deps.config.maxTop,
      maxPatchOperations: limits.maxPatchOperations,
    }),
    ...jobsHandlers({ queues: deps.queues, maxTop: deps.config.maxTop }),
    export: exportHandler({
      knex: deps.knex,
      replicas: deps.replicas,
      readLimits,
      maxConcurrent: exportConcurrencyFor(deps.config.dbPoolMax),
      slots: exportSlots(deps.redis, deps.config.queuePrefix, limits.maxExportsPerSubject, storeError),
      maxPerSubject: limits.maxExportsPerSubject,
      stallMs: limits.exportStallMs,
    }),
    changes: changesHandler({ knex: deps.knex, hub: deps.changes }),
    getCommand: commandHandler({ knex: deps.knex, commandBus: deps.commandBus }),
    ...entityWriteHandlers({
      ...commandWrites,
      patchLimits: patchLimitsOf(deps.config),
      geometryLimits: geometryLimitsOf(deps.config),
      replicas: deps.replicas,
    }),
    ...metadataHandlers({ maxTop: deps.config.maxTop, maxExpandDepth: readSettings.limits.maxExpandDepth }),
    ...entityReadHandlers({
      knex: deps.knex,
      replicas: deps.replicas,
      maxTop: deps.config.maxTop,
      limits: deps.config.limits,
    }),
    ...odataReadHandlers({
      knex: deps.knex,
      replicas: deps.replicas,
      maxTop: deps.config.maxTop,
      limits: deps.config.limits,
    }),
    ...odataWriteHandlers({
      ...commandWrites,
      patchLimits: patchLimitsOf(deps.config),
      geometryLimits: geometryLimitsOf(deps.config),
      replicas: deps.replicas,
      maxTop: deps.config.maxTop,
      limits: deps.config.limits,
    }),
  });

  // The only routes open without a token (health, metrics, the OpenAPI document and its page, Bull Board's login).
  app.use(routes.open);
  if (login) app.use(BULL_BOARD_PATH, login.guard);
  app.use(login ? unlessSessionCaller(verify) : verify);
  app.use(rateLimiter.middleware);
  // A batch has a body limit of its own (BATCH_MAX_BYTES) and policies per request (DESIGN §12).
  app.use(routes.ownBody);
  // Bodies are parsed only for authenticated callers.
  app.use(
    express.json({
      limit: MAX_REQUEST_BODY_BYTES,
      strict: false, // a non-array PATCH body must reach the route to get its own 400 (spec 4.3)
      type: ['application/json', 'application/json-patch+json', 'application/*+json'],
    }),
  );
  app.use(routes.authenticated);
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
