import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { readOperation, readSettingsOf, type ReadConfig, type ReadRequest } from '../../db/query/read-operation';
import type { EntityDefinition } from '../../domain/entities';
import { readRouter } from '../../db/replicas/read-router';
import type { ReplicaSet } from '../../db/replicas/replica-set';
import { readAfter } from '../http/consistency';
import { readAnswer } from '../http/answer';
import { sendAnswer } from '../http/send-answer';
import { routeOf } from '../routes/dispatch';

export interface ReadRouteDeps extends ReadConfig {
  knex: Knex;
  /** Hot standbys to read from (DATABASE_REPLICA_URLS); the primary alone without. */
  replicas?: ReplicaSet;
}

/**
 * The read a GET of an entity route asks for (`$count` is its key segment): the one builder of a
 * lone GET and of the same GET in a `$batch` (api/batch/batch-request-checks.ts). `If-None-Match`
 * counts for a keyed read only (db/query/read-operation.ts).
 */
export function readRequestOf(
  entity: EntityDefinition,
  key: string | undefined,
  query: Record<string, unknown>,
  ifNoneMatch: string | undefined,
): ReadRequest {
  return {
    route: entity.route,
    ...(key === undefined ? {} : { key }),
    query,
    ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
  };
}

/**
 * GET on every entity route (spec §4, §4.1), read by db/query/read-operation.ts. Reads go
 * straight to Postgres, each within STATEMENT_TIMEOUT_MS; JSON is built there, checked against
 * MAX_RESPONSE_BYTES there, and sent as text.
 */
export function entityReadHandlers(
  deps: ReadRouteDeps,
): Record<'listEntities' | 'countEntities' | 'getEntity', RequestHandler> {
  const settings = readSettingsOf(deps);
  const runFor = readRouter(deps.knex, deps.replicas, settings.timeoutMs);
  const query = (req: Request) => req.query as Record<string, unknown>;
  const read = (req: Request, key: string | undefined) =>
    readRequestOf(routeOf(req).entity!, key, query(req), req.headers['if-none-match']);

  /** A keyed read; `$count` is read as the key segment it is (db/query/read-operation.ts). */
  const keyed =
    (keyOf: (req: Request) => string): RequestHandler =>
    async (req: Request, res: Response) => {
      sendAnswer(res, readAnswer(await readOperation(runFor(readAfter(req)), read(req, keyOf(req)), settings)));
    };

  return {
    listEntities: async (req: Request, res: Response) => {
      const run = runFor(readAfter(req));
      sendAnswer(res, readAnswer(await readOperation(run, read(req, undefined), settings)));
    },
    countEntities: keyed(() => '$count'),
    getEntity: keyed((req) => req.params.key as string),
  };
}
