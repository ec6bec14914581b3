import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { readOperation, readSettingsOf, type ReadConfig } from '../../db/query/read-operation';
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
  const route = (req: Request) => routeOf(req).entity!.route;

  /** A keyed read; `$count` is read as the key segment it is (db/query/read-operation.ts). */
  const keyed =
    (keyOf: (req: Request) => string): RequestHandler =>
    async (req: Request, res: Response) => {
      const request = {
        route: route(req),
        key: keyOf(req),
        query: query(req),
        ifNoneMatch: req.headers['if-none-match'],
      };
      sendAnswer(res, readAnswer(await readOperation(runFor(readAfter(req)), request, settings)));
    };

  return {
    listEntities: async (req: Request, res: Response) => {
      const run = runFor(readAfter(req));
      sendAnswer(res, readAnswer(await readOperation(run, { route: route(req), query: query(req) }, settings)));
    },
    countEntities: keyed(() => '$count'),
    getEntity: keyed((req) => req.params.key as string),
  };
}
