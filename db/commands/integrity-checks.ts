import type { Knex } from 'knex';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { conflict, validationFailed } from '../../domain/errors/domain-error';
import { decodeId, encodeId } from '../../domain/ids/id-codec';
import { blockingReferrersOf } from '../../domain/writes/ownership';
import { statementsIn } from '../query/prepared-statements';

/**
 * The checks a write makes against other rows, inside its transaction: related entities that must
 * exist, unique values, and referrers that block a delete. Each names the offending member the way
 * spec §7 asks. The database constraints stay as the last word; db-errors.ts words their failures
 * the same way should a race slip past a check.
 */

/** A relation the written body sets: where it was written, which type, which encoded Id. */
export interface RelationRef {
  /** Message path without the entity prefix, e.g. `.Companies[0].Company`. */
  path: string;
  target: string;
  encodedId: string;
  /**
   * The key the row already holds here. A reference left as it was needs no check: its foreign
   * key already keeps the target from being deleted.
   */
  current?: number | null;
}

/** The relations of a write decoded: their keys by path, and the keys to check per target type. */
export interface DecodedRelations {
  keys: Map<string, number>;
  /** Keys newly referenced, by target type (a reference left as it was needs no check). */
  wanted: Map<string, Set<number>>;
  /** Whether every Id decoded (one that does not is reported like a missing row). */
  complete: boolean;
}

export function decodeRelations(refs: readonly RelationRef[]): DecodedRelations {
  const keys = new Map<string, number>();
  const wanted = new Map<string, Set<number>>();
  let complete = true;
  for (const ref of refs) {
    const id = decodeId(ref.target, ref.encodedId);
    if (id === null) {
      complete = false;
      continue;
    }
    keys.set(ref.path, id);
    if (id === ref.current) continue;
    if (!wanted.has(ref.target)) wanted.set(ref.target, new Set());
    wanted.get(ref.target)!.add(id);
  }
  return { keys, wanted, complete };
}

/** Throws 400 listing every reference that did not decode or whose row is not in `existing`. */
function assertAllExist(
  entityName: string,
  refs: readonly RelationRef[],
  { keys }: DecodedRelations,
  existing: Map<string, Set<number>>,
): void {
  const errors = refs
    .filter((ref) => {
      const id = keys.get(ref.path);
      return id === undefined || (id !== ref.current && !existing.get(ref.target)?.has(id));
    })
    .map((ref) => `${entityName}${ref.path}.Id: ${ref.target} '${ref.encodedId}' does not exist`);
  if (errors.length) throw validationFailed(errors);
}

/**
 * Decodes and checks every newly referenced row, all in one statement; a `key share` lock keeps
 * each from being deleted until this command commits. Returns the keys by path; throws 400 listing
 * every missing one (an undecodable Id is reported the same way).
 */
export async function resolveRelations(
  trx: Knex.Transaction,
  entityName: string,
  refs: readonly RelationRef[],
  decoded: DecodedRelations = decodeRelations(refs),
): Promise<Map<string, number>> {
  const existing = new Map<string, Set<number>>();
  if (decoded.wanted.size > 0) {
    const locking = lockingQuery(decoded.wanted);
    const { rows } = await (
      await statementsIn(trx)
    ).raw<{ rows: { t: number; id: number }[] }>(`with ${locking.ctes} ${locking.selects}`, locking.bindings);
    collectExisting(locking.targets, rows, existing);
  }
  assertAllExist(entityName, refs, decoded, existing);
  return decoded.keys;
}

/**
 * An insert that first locks the rows it references `for key share` and is made only when all of
 * them exist, in one statement: a POST naming related entities waits on Postgres once for both
 * (issue 28), where the check and then the insert waited twice. The foreign keys take the same locks
 * and remain the last word. When one is missing nothing is inserted, and the 400 names each missing
 * row as resolveRelations does. `decoded` must be complete and want at least one row; `insert`
 * gives the insert's columns and values, written with knex `?` placeholders.
 */
export async function insertWithRelations(
  trx: Knex.Transaction,
  entityName: string,
  refs: readonly RelationRef[],
  decoded: DecodedRelations,
  insert: { table: string; columns: string; values: string; bindings: readonly Knex.RawBinding[] },
): Promise<{ id: number; version: number }> {
  const locking = lockingQuery(decoded.wanted);
  const allExist = locking.targets.map((_, i) => `(select count(*) from t${i}) = ?`).join(' and ');
  const { rows } = await (
    await statementsIn(trx)
  ).raw<{ rows: { t: number; id: number; version: number | null }[] }>(
    `with ${locking.ctes}, inserted as (insert into ${insert.table} (${insert.columns}) select ${insert.values} where ${allExist} returning id, version)
    select -1 as t, id, version from inserted union all ${locking.selects}`,
    [...locking.bindings, ...insert.bindings, ...locking.targets.map((target) => decoded.wanted.get(target)!.size)],
  );
  const created = rows.find((row) => row.t === -1);
  if (created) return { id: created.id, version: created.version! };
  const existing = new Map<string, Set<number>>();
  collectExisting(
    locking.targets,
    rows.filter((row) => row.t >= 0),
    existing,
  );
  assertAllExist(entityName, refs, decoded, existing);
  throw new Error('insertWithRelations: every related row exists, yet nothing was inserted');
}

/**
 * Which of the wanted keys exist, per target type, each locked `for key share`: one CTE per type
 * (locking clauses are not allowed beside UNION, but are inside WITH queries) and a union naming
 * each found key by the type's position in `targets` (with a null version, the column an insert
 * beside it answers).
 */
function lockingQuery(wanted: Map<string, Set<number>>): {
  targets: string[];
  ctes: string;
  selects: string;
  bindings: number[][];
} {
  const targets = [...wanted.keys()];
  return {
    targets,
    ctes: targets
      .map(
        (target, i) =>
          `t${i} as (select id from ${entityByName(target).table} where id = any(?::int[]) order by id for key share)`,
      )
      .join(', '),
    selects: targets.map((_, i) => `select ${i} as t, id, null::int as version from t${i}`).join(' union all '),
    bindings: targets.map((target) => [...wanted.get(target)!].sort((a, b) => a - b)),
  };
}

function collectExisting(
  targets: readonly string[],
  rows: readonly { t: number; id: number }[],
  existing: Map<string, Set<number>>,
): void {
  targets.forEach((target) => existing.set(target, new Set()));
  for (const row of rows) existing.get(targets[row.t]!)!.add(row.id);
}

export function alreadyUsedMessage(entity: EntityDefinition, field: string, value: unknown): string {
  return `${entity.name}.${field}: ${typeof value === 'string' ? `'${value}'` : String(value)} is already used`;
}

/** Unique fields (DESIGN §4: Country.IsoCode, the lookup names) already held by another row: 409. */
export async function assertUniqueValues(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  values: Record<string, unknown>,
  ownId: number | null,
): Promise<void> {
  const errors: string[] = [];
  for (const [name, field] of Object.entries(entity.fields)) {
    const value = values[field.column];
    if (!field.unique || value === null || value === undefined) continue;
    const query = trx(entity.table)
      .select('id')
      .where(field.column, value as Knex.Value);
    if (ownId !== null) query.whereNot('id', ownId);
    if (await query.first()) errors.push(alreadyUsedMessage(entity, name, value));
  }
  if (errors.length) throw conflict(errors);
}

const MAX_NAMED_REFERRERS = 10;

/**
 * Rows that still point at the row about to be deleted (owned children excepted: they go with it).
 * DESIGN §10: up to ten are named, then a count of the rest.
 */
export async function assertNotReferenced(trx: Knex.Transaction, entity: EntityDefinition, id: number): Promise<void> {
  const named: string[] = [];
  let total = 0;
  for (const referrer of blockingReferrersOf(entity)) {
    const rows = (await trx(referrer.entity.table)
      .select('id')
      .where(referrer.column, id)
      .orderBy('id')
      .limit(MAX_NAMED_REFERRERS - named.length + 1)) as { id: number }[];
    if (rows.length === 0) continue;
    const count = (await trx(referrer.entity.table).where(referrer.column, id).count({ n: '*' }).first()) as {
      n: number;
    };
    total += Number(count.n);
    for (const row of rows.slice(0, MAX_NAMED_REFERRERS - named.length)) {
      named.push(
        `${entity.name}: still referenced by ${referrer.entity.name} '${encodeId(referrer.entity.name, row.id)}'`,
      );
    }
  }
  if (total === 0) return;
  const errors = [...named];
  if (total > named.length) errors.push(`${entity.name}: and ${total - named.length} more referrers`);
  throw conflict(errors);
}
