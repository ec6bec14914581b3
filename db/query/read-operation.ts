import type { Knex } from 'knex';
import { readableEntityOf, keyOf } from '../../domain/entities/entity-key';
import { notFound } from '../../domain/errors/domain-error';
import { parseReadOptions } from '../../domain/queries/read-options';
import { nextPageAddress } from '../../domain/queries/next-page-link';
import { encodeId } from '../../domain/ids/id-codec';
import { DEFAULT_READ_LIMITS, type ReadLimits } from '../../domain/queries/read-limits';
import type { LimitsConfig } from '../../infra/config/load-config';
import type { ReadResult } from '../../domain/results/request-result';
import { entityTagOf, ifNoneMatchMatches } from '../../domain/writes/entity-version';
import {
  countStatement,
  fetchCount,
  fetchPage,
  readEntity,
  type PageStatements,
  type ReadBudget,
} from './entity-reader';
import { listPlanOf } from './list-plans';
import { planCount } from './read-plan';
import { withReadTimeout, type ReadDb } from './read-timeout';

/**
 * A GET on an entity route as data (spec §4, §4.1): collection reads with OData options, `/$count`,
 * keyed reads with an entity tag and `If-None-Match`. The API's read routes and the reads of a
 * `$batch` (run by a command worker, DESIGN §12) both read through here, and the API answers both
 * results alike (api/http/answer.ts).
 */

export interface ReadRequest {
  /** The entity route (`Schemes`). */
  route: string;
  /** The key segment, when there is one. */
  key?: string;
  /** `/$count` of the set. */
  count?: true;
  /** Query options as the `simple` query parser gives them. */
  query: Record<string, unknown>;
  ifNoneMatch?: string;
}

export interface ReadSettings {
  limits: ReadLimits;
  budget: ReadBudget;
  /** STATEMENT_TIMEOUT_MS of reads on the pool. */
  timeoutMs: number;
}

/** What the read settings come from: MAX_TOP and the DESIGN §13 limits (defaults when not given). */
export interface ReadConfig {
  maxTop: number;
  limits?: Pick<LimitsConfig, keyof Omit<ReadLimits, 'maxTop'> | 'statementTimeoutMs' | 'maxResponseBytes'>;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** The read settings of a deployment: the API's read routes and the `$batch` reads of its workers. */
export function readSettingsOf(config: ReadConfig): ReadSettings {
  return {
    limits: { ...DEFAULT_READ_LIMITS, ...config.limits, maxTop: config.maxTop },
    budget: { maxResponseBytes: config.limits?.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES },
    timeoutMs: config.limits?.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
  };
}

/**
 * Where a read runs: on pooled connections under STATEMENT_TIMEOUT_MS (`onPool`), or inside a
 * transaction whose writes it must see (a GET in a `$batch` atomicity group).
 */
export type ReadRunner = <T>(read: (db: ReadDb) => Promise<T>) => Promise<T>;

export function onPool(knex: Knex, timeoutMs: number): ReadRunner {
  return (read) => withReadTimeout(knex, timeoutMs, read);
}

/**
 * A page and, when asked, its count, run on two pooled connections at once, as the floor does:
 * one connection would run them one after the other (c=1 filtered + $count: 0.60 of the floor
 * instead of ~0.95).
 */
export async function pageAndCount(run: ReadRunner, statements: PageStatements, settings: ReadSettings) {
  const { page: pageStatement, count } = statements;
  const [page, total] = await Promise.all([
    run((db) => fetchPage(db, pageStatement, settings.budget)),
    count ? run((db) => fetchCount(db, count)) : undefined,
  ]);
  return { page, total };
}

export async function readOperation(
  run: ReadRunner,
  request: ReadRequest,
  settings: ReadSettings,
): Promise<ReadResult> {
  const entity = readableEntityOf(request.route);
  const options = () => parseReadOptions(request.query, settings.limits);
  const { budget } = settings;
  if (request.count) {
    const statement = countStatement(planCount(entity, options()), settings.limits);
    return { kind: 'count', ...(await run((db) => fetchCount(db, statement))) };
  }
  if (request.key === undefined) {
    // Parse → plan (every 400) → SQL, or the plan kept for the same query (list-plans.ts).
    const plan = listPlanOf(entity, request.route, request.query, settings);
    const parsed = plan.options;
    const { page, total } = await pageAndCount(run, plan, settings);
    const result: Extract<ReadResult, { kind: 'page' }> = { kind: 'page', json: page.json };
    if (total !== undefined) result.total = total;
    if (page.hasNext && page.lastKey !== undefined) {
      const next = nextPageAddress({
        route: request.route,
        query: request.query,
        options: parsed,
        lastId: encodeId(entity.name, page.lastKey),
        limits: settings.limits,
      });
      if (next) result.next = next;
    }
    return result;
  }
  const id = keyOf(entity, request.key);
  const parsed = options();
  const row = await run((db) =>
    readEntity(db, entity, id, { expand: parsed.expand, expandTop: parsed.expandTop, ...budget }),
  );
  if (!row) throw notFound(`${entity.name} '${request.key}' does not exist.`);
  const tag = entityTagOf(row);
  if (ifNoneMatchMatches(request.ifNoneMatch, tag)) return { kind: 'unchanged', tag };
  return { kind: 'entity', json: row.json, tag };
}
