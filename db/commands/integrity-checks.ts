import type { Knex } from 'knex';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { conflict, validationFailed } from '../../domain/errors/domain-error';
import { decodeId, encodeId } from '../../domain/ids/id-codec';
import { blockingReferrersOf } from '../../domain/writes/ownership';

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

/**
 * Decodes and checks every newly referenced row, all in one statement; a `key share` lock keeps
 * each from being deleted until this command commits. Returns the keys by path; throws 400 listing
 * every missing one (an undecodable Id is reported the same way).
 */
export async function resolveRelations(
  trx: Knex.Transaction,
  entityName: string,
  refs: readonly RelationRef[],
): Promise<Map<string, number>> {
  const keys = new Map<string, number>();
  const wanted = new Map<string, Set<number>>();
  for (const ref of refs) {
    const id = decodeId(ref.target, ref.encodedId);
    if (id === null) continue;
    keys.set(ref.path, id);
    if (id === ref.current) continue;
    if (!wanted.has(ref.target)) wanted.set(ref.target, new Set());
    wanted.get(ref.target)!.add(id);
  }
  const existing = await lockExisting(trx, wanted);
  const errors = refs
    .filter((ref) => {
      const id = keys.get(ref.path);
      return id === undefined || (id !== ref.current && !existing.get(ref.target)?.has(id));
    })
    .map((ref) => `${entityName}${ref.path}.Id: ${ref.target} '${ref.encodedId}' does not exist`);
  if (errors.length) throw validationFailed(errors);
  return keys;
}

/** Which of the wanted keys exist, per entity, each locked `for key share` (one statement). */
async function lockExisting(
  trx: Knex.Transaction,
  wanted: Map<string, Set<number>>,
): Promise<Map<string, Set<number>>> {
  const existing = new Map<string, Set<number>>();
  if (wanted.size === 0) return existing;
  const targets = [...wanted.keys()];
  // Locking clauses are not allowed beside UNION, but are inside WITH queries.
  const ctes = targets.map(
    (target, i) =>
      `t${i} as (select id from ${entityByName(target).table} where id = any(?::int[]) order by id for key share)`,
  );
  const selects = targets.map((_, i) => `select ${i} as t, id from t${i}`);
  const result = await trx.raw<{ rows: { t: number; id: number }[] }>(
    `with ${ctes.join(', ')} ${selects.join(' union all ')}`,
    targets.map((target) => [...wanted.get(target)!].sort((a, b) => a - b)),
  );
  targets.forEach((target) => existing.set(target, new Set()));
  for (const row of result.rows) existing.get(targets[row.t]!)!.add(row.id);
  return existing;
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
