import { Router, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import { notFound } from '../../domain/errors/domain-error';
import { parseReadOptions } from '../../domain/queries/read-options';
import { countEntities, listEntities, readEntity } from '../../db/query/entity-reader';
import { searchExtra } from '../../db/search/search-query';
import { entityOfRoute, keyOf } from './entity-key';
import { etagOf } from './etag';

export interface ReadRouteDeps {
  knex: Knex;
  maxTop: number;
}

/**
 * GET on every entity route (spec §4, §4.1): collection reads with OData options, `/$count`, and
 * keyed reads with an ETag. Reads go straight to Postgres; JSON is built there and sent as text.
 */
export function entityReadRoutes(deps: ReadRouteDeps): Router {
  const router = Router();

  router.get('/:route', async (req: Request, res: Response) => {
    const entity = entityOfRoute(req.params.route as string, 'read');
    const options = parseReadOptions(req.query as Record<string, unknown>, deps.maxTop);
    const page = await listEntities(deps.knex, entity, options, searchExtra(entity, options));
    if (page.total !== undefined) res.setHeader('X-Total-Count', String(page.total));
    res.type('application/json').send(page.json);
  });

  router.get('/:route/:key', async (req: Request, res: Response) => {
    const entity = entityOfRoute(req.params.route as string, 'read');
    const key = req.params.key as string;
    if (key === '$count') {
      const options = parseReadOptions(req.query as Record<string, unknown>, deps.maxTop);
      const n = await countEntities(deps.knex, entity, options, searchExtra(entity, options));
      res.type('text/plain').send(String(n));
      return;
    }
    const id = keyOf(entity, key);
    const options = parseReadOptions(req.query as Record<string, unknown>, deps.maxTop);
    const row = await readEntity(deps.knex, entity, id, options.expand);
    if (!row) throw notFound(`${entity.name} '${key}' does not exist.`);
    const etag = etagOf(row.version);
    res.setHeader('ETag', etag);
    if (req.headers['if-none-match'] === etag) {
      res.status(304).end();
      return;
    }
    res.type('application/json').send(row.json);
  });

  return router;
}
