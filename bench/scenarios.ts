import type pg from 'pg';
import { Scheme } from '../domain/entities';
import { parseReadOptions } from '../domain/queries/read-options';
import { DEFAULT_READ_LIMITS } from '../domain/queries/read-limits';
import { keyedSql, listStatements as readStatements } from '../db/query/entity-reader';
import { planRead } from '../db/query/read-plan';

/**
 * The benchmark scenarios of DESIGN §9. Each read names the service path and the statements the
 * floor runs for it: exactly what the service's compiler produces, so the ratio measures what the
 * service adds (parsing, validation, auth, framework), not a different query.
 */

export interface ReadScenario {
  name: string;
  /** Path on the service; `{key}` is replaced by a rotating scheme key. */
  path: string;
  /** Query options as the service receives them (list scenarios). */
  query?: Record<string, string>;
}

/** Seeded words (generated-data.seed.ts) OR-ed: most rows match, so ranking dominates (DESIGN §13). */
const TWENTY_WORDS = [
  'tower',
  'london',
  'acme',
  'aurora',
  'crown',
  'helix',
  'summit',
  'redwood',
  'trident',
  'capital',
  'partners',
  'estates',
  'ventures',
  'holdings',
  'group',
  'dublin',
  'yard',
  'works',
  'court',
  'house',
].join(' OR ');

/** The service's response-size budget (MAX_RESPONSE_BYTES default), so the floor runs its exact statements. */
const BUDGET = { maxResponseBytes: 32 * 1024 * 1024 };

export const READ_SCENARIOS: ReadScenario[] = [
  { name: 'keyed GET', path: '/Schemes/{key}' },
  {
    name: 'list $top=60 + nested $expand',
    path: '/Schemes?$top=60&$expand=Address($expand=Country),Companies',
    query: { $top: '60', $expand: 'Address($expand=Country),Companies' },
  },
  {
    name: 'filtered + ordered + $count',
    path: `/Schemes?$filter=${encodeURIComponent("TotalUnits ge 100 and startswith(SchemeName,'Alpha')")}&$orderby=${encodeURIComponent('SchemeName desc')}&$count=true&$top=20`,
    query: {
      $filter: "TotalUnits ge 100 and startswith(SchemeName,'Alpha')",
      $orderby: 'SchemeName desc',
      $count: 'true',
      $top: '20',
    },
  },
  {
    name: '$search',
    path: `/Schemes?$search=${encodeURIComponent('tower london')}&$top=20`,
    query: { $search: 'tower london', $top: '20' },
  },
  {
    name: 'deep $skip=50000',
    path: '/Schemes?$skip=50000&$top=60&$expand=Address',
    query: { $skip: '50000', $top: '60', $expand: 'Address' },
  },
  {
    name: '$search of 20 OR-ed words',
    path: `/Schemes?$search=${encodeURIComponent(TWENTY_WORDS)}&$top=20`,
    query: { $search: TWENTY_WORDS, $top: '20' },
  },
];

export interface Statement {
  sql: string;
  params: unknown[];
}

/** The statements the service runs for a list scenario: the page, and its count when asked. */
export function listStatements(query: Record<string, string>): {
  page: Statement;
  count?: Statement & { limit?: number };
} {
  const options = parseReadOptions(query, 1000);
  return readStatements(planRead(Scheme, options), BUDGET, options.count ? DEFAULT_READ_LIMITS : undefined);
}

/** The statement of a keyed read of one scheme. */
export function keyedStatement(id: number): Statement {
  return keyedSql(Scheme, id, BUDGET);
}

/**
 * knex `?` placeholders → pg `$n` (the read statements contain no literal question marks), named
 * so each connection prepares it once, as the service does with texts that repeat.
 */
export function positional(name: string, statement: Statement): pg.QueryConfig {
  let n = 0;
  return { name, text: statement.sql.replace(/\?/g, () => `$${++n}`), values: statement.params };
}
