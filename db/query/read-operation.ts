import type { Knex } from 'knex';
import { readableEntityOf, keyOf } from '../../domain/entities/entity-key';
import { notFound } from '../../domain/errors/domain-error';
import { parseReadOptions } from '../../domain/queries/read-options';
import { nextPageLink } from '../../domain/queries/next-page-link';
import { encodeId } from '../../domain/ids/id-codec';
import { DEFAULT_READ_LIMITS, type ReadLimits } from '../../domain/queries/read-limits';
import type { LimitsConfig } from '../../infra/config/load-config';
import { JSON_TYPE, type Answer } from '../../domain/responses/answer';
import { etagOf } from '../../domain/writes/entity-version';
import { countStatement, fetchCount, fetchPage, listStatements, readEntity, type ReadBudget } from './entity-reader';
import { planCount, planRead } from './read-plan';
import { withReadTimeout, type ReadDb } from './read-timeout';

/**
 * A GET on an entity route as data (spec §4, §4.1): collection reads with OData options, `/$count`,
 * keyed reads with an ETag and `If-None-Match`. The API's read routes and the reads of a `$batch`
 * (run by a command worker, DESIGN §12) both answer through here, so they answer alike.
 */

export interface ReadRequest {
  /** The entity route (`Schemes`). */
  route: string;
  /** The key segment (`$count` included), when there is one. */
  key?: string;
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

export async function readOperation(run: ReadRunner, request: ReadRequest, settings: ReadSettings): Promise<Answer> {
  const entity = readableEntityOf(request.route);
  const options = () => parseReadOptions(request.query, settings.limits);
  const { budget } = settings;
  if (request.key === undefined) {
    const parsed = options();
    // Parse → plan (every 400) → SQL: the page and its count share one compiled WHERE.
    const statements = listStatements(planRead(entity, parsed), budget, parsed.count);
    const count = statements.count;
    // The page and its count on two pooled connections at once, as the floor does: one connection
    // would run them one after the other (c=1 filtered + $count: 0.60 of the floor instead of ~0.95).
    const [page, total] = await Promise.all([
      run((db) => fetchPage(db, statements.page, budget)),
      count ? run((db) => fetchCount(db, count)) : undefined,
    ]);
    const headers: Record<string, string> = { 'content-type': JSON_TYPE };
    if (total !== undefined) headers['x-total-count'] = String(total);
    if (page.hasNext && page.lastKey !== undefined) {
      const lastId = encodeId(entity.name, page.lastKey);
      const link = nextPageLink({
        route: request.route,
        query: request.query,
        options: parsed,
        lastId,
        limits: settings.limits,
      });
      if (link) headers.link = link;
    }
    return { status: 200, headers, body: page.json };
  }
  if (request.key === '$count') {
    const statement = countStatement(planCount(entity, options()));
    const n = await run((db) => fetchCount(db, statement));
    return { status: 200, headers: { 'content-type': 'text/plain' }, body: String(n) };
  }
  const id = keyOf(entity, request.key);
  const parsed = options();
  const row = await run((db) =>
    readEntity(db, entity, id, { expand: parsed.expand, expandTop: parsed.expandTop, ...budget }),
  );
  if (!row) throw notFound(`${entity.name} '${request.key}' does not exist.`);
  const etag = readEtag(row);
  if (ifNoneMatchMatches(request.ifNoneMatch, etag)) return { status: 304, headers: { etag } };
  return { status: 200, headers: { etag, 'content-type': JSON_TYPE }, body: row.json };
}
