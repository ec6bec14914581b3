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

/** Which read of an entity route: the list (neither), `/$count`, or the entity of a key. */
export interface ReadTarget {
  key?: string;
  count?: true;
}

/**
 * The read a GET of an entity route asks for: the one builder of a lone GET and of the same GET in
 * a `$batch` (api/batch/batch-request-checks.ts). `If-None-Match` counts for a keyed read only
 * (db/query/read-operation.ts).
 */
export function readRequestOf(
  entity: EntityDefinition,
  { key, count }: ReadTarget,
  query: Record<string, unknown>,
  ifNoneMatch: string | undefined,
): ReadRequest {
  return {
    route: entity.route,
    ...(key === undefined ? {} : { key }),
    ...(count ? { count } : {}),
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
  /** The handler of one kind of read: the list, the count, or a keyed read. */
  const reading =
    (targetOf: (req: Request) => ReadTarget): RequestHandler =>
    async (req: Request, res: Response) => {
      const request = readRequestOf(routeOf(req).entity!, targetOf(req), query(req), req.headers['if-none-match']);
      sendAnswer(res, readAnswer(await readOperation(runFor(readAfter(req)), request, settings)));
    };

  return {
    listEntities: reading(() => ({})),
    countEntities: reading(() => ({ count: true })),
    getEntity: reading((req) => ({ key: req.params.key as string })),
  };
}
