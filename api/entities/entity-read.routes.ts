import { Router, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import { readOperation, readSettingsOf, type ReadConfig } from '../../db/query/read-operation';
import { readRouter } from '../../db/replicas/read-router';
import type { ReplicaSet } from '../../db/replicas/replica-set';
import { readAfter } from '../http/consistency';
import { readAnswer } from '../http/answer';
import { sendAnswer } from '../http/send-answer';

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
export function entityReadRoutes(deps: ReadRouteDeps): Router {
  const router = Router();
  const settings = readSettingsOf(deps);
  const runFor = readRouter(deps.knex, deps.replicas, settings.timeoutMs);
  const query = (req: Request) => req.query as Record<string, unknown>;

  router.get('/:route', async (req: Request, res: Response) => {
    const run = runFor(readAfter(req));
    const result = await readOperation(run, { route: req.params.route as string, query: query(req) }, settings);
    sendAnswer(res, readAnswer(result));
  });

  router.get('/:route/:key', async (req: Request, res: Response) => {
    const request = {
      route: req.params.route as string,
      key: req.params.key as string,
      query: query(req),
      ifNoneMatch: req.headers['if-none-match'],
    };
    sendAnswer(res, readAnswer(await readOperation(runFor(readAfter(req)), request, settings)));
  });

  return router;
}
