import { Router, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import type { LimitsConfig } from '../../infra/config/load-config';
import { notFound } from '../../domain/errors/domain-error';
import { parseReadOptions } from '../../domain/queries/read-options';
import { DEFAULT_READ_LIMITS, type ReadLimits } from '../../domain/queries/read-limits';
import { countStatement, fetchCount, fetchPage, listStatements, readEntity } from '../../db/query/entity-reader';
import { planCount, planRead } from '../../db/query/read-plan';
import { withReadTimeout } from '../../db/query/read-timeout';
import { keyOf, readableEntityOf } from './entity-key';
import { etagOf } from '../../domain/writes/entity-version';

export interface ReadRouteDeps {
  knex: Knex;
  maxTop: number;
  /** DESIGN §13 limits (config.limits); the defaults when not given. */
  limits?: Pick<LimitsConfig, keyof Omit<ReadLimits, 'maxTop'> | 'statementTimeoutMs' | 'maxResponseBytes'>;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * The ETag of a read: the row version alone (what `If-Match` on writes compares), or with
 * expansions the version plus a digest of the whole document, so a change to any expanded row
 * changes it (DESIGN §13).
 */
function readEtag(row: { version: number; digest?: string }): string {
  return row.digest ? `"${row.version}-${row.digest}"` : etagOf(row.version);
}

/**
 * `If-None-Match` as RFC 9110 §13.1.2: `*` matches any current representation; otherwise a
 * comma-separated list of entity tags compared weakly (a `W/` prefix on either side is ignored).
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const current = opaque(etag);
  return (header.match(/(?:W\/)?"[^"]*"/g) ?? []).some((tag) => opaque(tag) === current);
}

/**
 * GET on every entity route (spec §4, §4.1): collection reads with OData options, `/$count`, and
 * keyed reads with an ETag. Reads go straight to Postgres, each within STATEMENT_TIMEOUT_MS; JSON
 * is built there, checked against MAX_RESPONSE_BYTES there, and sent as text.
 */
export function entityReadRoutes(deps: ReadRouteDeps): Router {
  const router = Router();
  const limits: ReadLimits = { ...DEFAULT_READ_LIMITS, ...deps.limits, maxTop: deps.maxTop };
  const timeoutMs = deps.limits?.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const budget = { maxResponseBytes: deps.limits?.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES };
  const optionsOf = (req: Request) => parseReadOptions(req.query as Record<string, unknown>, limits);

  router.get('/:route', async (req: Request, res: Response) => {
    const entity = readableEntityOf(req.params.route as string);
    const options = optionsOf(req);
    // Parse → plan (every 400) → SQL: the page and its count share one compiled WHERE.
    const statements = listStatements(planRead(entity, options), budget, options.count);
    const count = statements.count;
    // The page and its count on two pooled connections at once, as the floor does: one connection
    // would run them one after the other (c=1 filtered + $count: 0.60 of the floor instead of ~0.95).
    const [page, total] = await Promise.all([
      withReadTimeout(deps.knex, timeoutMs, (db) => fetchPage(db, statements.page, budget)),
      count ? withReadTimeout(deps.knex, timeoutMs, (db) => fetchCount(db, count)) : undefined,
    ]);
    if (total !== undefined) res.setHeader('X-Total-Count', String(total));
    res.type('application/json').send(page.json);
  });

  router.get('/:route/:key', async (req: Request, res: Response) => {
    const entity = readableEntityOf(req.params.route as string);
    const key = req.params.key as string;
    if (key === '$count') {
      const statement = countStatement(planCount(entity, optionsOf(req)));
      const n = await withReadTimeout(deps.knex, timeoutMs, (db) => fetchCount(db, statement));
      res.type('text/plain').send(String(n));
      return;
    }
    const id = keyOf(entity, key);
    const options = optionsOf(req);
    const row = await withReadTimeout(deps.knex, timeoutMs, (db) =>
      readEntity(db, entity, id, { expand: options.expand, expandTop: options.expandTop, ...budget }),
    );
    if (!row) throw notFound(`${entity.name} '${key}' does not exist.`);
    const etag = readEtag(row);
    res.setHeader('ETag', etag);
    if (ifNoneMatchMatches(req.headers['if-none-match'], etag)) {
      res.status(304).end();
      return;
    }
    res.type('application/json').send(row.json);
  });

  return router;
}
