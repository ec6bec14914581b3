import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';

/**
 * Statements whose text repeats (the API's reads; the command worker's PATCH document and command
 * record), prepared once per connection. An unnamed statement is
 * parsed and planned on every execution: for a keyed read that was 0.42 ms of bind (planning)
 * against 0.16 ms of execution (issue 12). A text seen before gets a name derived from it, and pg
 * then sends Parse only the first time that name runs on a connection; Postgres keeps its plan.
 *
 * Both caches are bounded, since texts vary with the shape of a query (filter, ordering,
 * expansions — never with client values, which are always parameters): the texts remembered
 * process-wide, and the statements prepared on each connection, the least recently used of which
 * is deallocated when a new one would pass the bound.
 */

/** Distinct texts remembered to tell a repeated one (knex `?` text → pg `$n` text and name). */
const REMEMBERED_TEXTS = 2000;
/** Prepared statements kept per connection (each holds a parse tree and a plan in the backend). */
export const PREPARED_PER_CONNECTION = 100;

interface Known {
  /** The text with `$n` placeholders. */
  text: string;
  /** Set from the second sighting on. */
  name?: string;
}

/** Insertion order is recency order: a hit is deleted and set again. */
const known = new Map<string, Known>();
/** Per connection, the names prepared on it, least recently used first. */
const preparedOn = new WeakMap<pg.ClientBase, Map<string, true>>();

/** knex `?` placeholders → pg `$n`: statements are built with one `?` per bound value and no other. */
function positional(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * Statements whose best plan depends on a bound value are planned for each execution, never
 * prepared: a `$search` word (db/query/search-condition.ts) in half the rows is best found by
 * walking key order until the rank window is full, a rare one through the GIN index, and a generic
 * plan, which cannot see the word, took 307 ms for a common word against 20 ms planned for it (issue
 * 27, 100k schemes).
 */
const PLANNED_PER_VALUE = /\bto_tsquery\(/;

function knownText(sql: string): Known {
  // A remembered text was tested already: the test scans the whole text (a keyed read's is ~4 kB).
  let entry = known.get(sql);
  if (entry) {
    known.delete(sql);
    entry.name ??= `r_${createHash('sha1').update(entry.text).digest('base64url')}`;
  } else {
    if (PLANNED_PER_VALUE.test(sql)) return { text: positional(sql) };
    entry = { text: positional(sql) };
    if (known.size >= REMEMBERED_TEXTS) known.delete(known.keys().next().value!);
  }
  known.set(sql, entry);
  return entry;
}

/**
 * pg's own record of the statements a connection has parsed, so a deallocated name is parsed
 * again when it comes back (pg offers no public call for this).
 */
function parsedStatements(client: pg.ClientBase): Record<string, string> | undefined {
  return (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection
    ?.parsedStatements;
}

async function makeRoom(client: pg.ClientBase, names: Map<string, true>, max: number): Promise<void> {
  while (names.size >= max) {
    const oldest = names.keys().next().value!;
    names.delete(oldest);
    const parsed = parsedStatements(client);
    if (parsed?.[oldest] === undefined) continue;
    await client.query(`deallocate "${oldest}"`);
    delete parsed[oldest];
  }
}

/**
 * Runs a statement written with knex `?` placeholders on one pg connection, prepared when its text
 * has been seen before. Resolves to pg's result (`rows`), as knex's `raw` does.
 */
export async function runStatement<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  sql: string,
  values: readonly unknown[],
  maxPrepared = PREPARED_PER_CONNECTION,
): Promise<pg.QueryResult<R>> {
  return (await sendStatement<R>(client, sql, values, maxPrepared)).answer;
}

/** A statement handed to pg, its answer still to come. */
export interface SentStatement<R extends pg.QueryResultRow> {
  answer: Promise<pg.QueryResult<R>>;
}

/**
 * runStatement, resolving as soon as the statement is handed to pg: on a pipelined connection
 * (db/pipelined-pg.ts) it is then on its way, and a statement queued next (a COMMIT) follows it
 * without waiting for its answer.
 */
export async function sendStatement<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  sql: string,
  values: readonly unknown[],
  maxPrepared = PREPARED_PER_CONNECTION,
): Promise<SentStatement<R>> {
  const { text, name } = knownText(sql);
  if (!name) return { answer: client.query<R>({ text, values: values as unknown[] }) };
  let names = preparedOn.get(client);
  if (!names) preparedOn.set(client, (names = new Map()));
  if (names.has(name)) names.delete(name);
  else await makeRoom(client, names, maxPrepared);
  names.set(name, true);
  return { answer: client.query<R>({ name, text, values: values as unknown[] }) };
}

/** `raw` statements (knex `?` placeholders) on one pg connection, prepared when their text repeats. */
export function statementsOn(connection: pg.ClientBase): Pick<Knex, 'raw'> {
  return {
    raw: ((sql: string, bindings: readonly unknown[] = []) =>
      runStatement(connection, sql, bindings)) as unknown as Knex['raw'],
  };
}

/**
 * The same on a transaction's own connection, so the command worker's repeated statements are
 * planned once per connection rather than per command (parse + bind of the PATCH document: 0.62 ms
 * of its 0.73, bench/README.md). Only for statements whose result columns no migration changes: a
 * prepared `select *` would fail once a column is added.
 */
export async function statementsIn(trx: Knex.Transaction): Promise<Pick<Knex, 'raw'>> {
  return statementsOn(await connectionOf(trx));
}

/** A transaction's own connection: inside a transaction knex hands it out (and releasing it is a no-op). */
export async function connectionOf(trx: Knex.Transaction): Promise<pg.ClientBase> {
  return (await trx.client.acquireConnection()) as pg.ClientBase;
}
