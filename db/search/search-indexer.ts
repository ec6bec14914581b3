import type { Knex } from 'knex';
import { ENTITIES, entityByName, type EntityDefinition } from '../../domain/entities';
import type { DomainEvent } from '../../domain/events/domain-event';
import { pathTextSql, searchableEntities, type PathStep } from './search-paths';
import { TEXT_SEARCH_CONFIG } from '../query/search-condition';

/**
 * Keeps the search read model current: one document per searchable field (`search_fields`, for
 * searches naming fields) and one of the whole entity (`search_documents`, for the rest).
 * Documents are always rebuilt from the rows as they are now, never from event payloads, so
 * handling is idempotent and order-safe: a late or repeated event can only rebuild the same,
 * current document.
 */

const SEARCHABLE = searchableEntities(ENTITIES);

/** Name-like first field ranks highest, own fields next, text reached through relations last. */
function weightOf(index: number, path: string): 'A' | 'B' | 'C' {
  if (index === 0) return 'A';
  return path.includes('/') ? 'C' : 'B';
}

/**
 * Rebuilds the documents of `keys` of one entity (deleting those of rows that are gone). Unordered
 * against concurrent rebuilds: the workers go through reindexDocuments.
 */
export async function reindex(knex: Knex, entity: EntityDefinition, keys: number[]): Promise<void> {
  const searchable = SEARCHABLE.find((s) => s.entity === entity);
  if (!searchable || keys.length === 0) return;
  const vector = (i: number) => `to_tsvector('${TEXT_SEARCH_CONFIG}', coalesce(x.f${i}, ''))`;
  const texts = searchable.fields.map(([, steps], i) => `${pathTextSql(steps, 'r')} as f${i}`).join(', ');
  const perField = searchable.fields.map(([field], i) => `('${field}', ${vector(i)})`);
  const all = searchable.fields
    .map(([field], i) => `setweight(${vector(i)}, '${weightOf(i, entity.searchFields[field]!)}')`)
    .join(' || ');
  // One statement: upsert the non-empty documents, delete the rest (emptied fields, gone rows).
  // The deletes cannot see the upserts' rows (one snapshot) and touch only rows they do not write.
  await knex.raw(
    `with x as materialized (select r.id, ${texts} from ${entity.table} r where r.id = any(?::int[])),
     fields as (
       select x.id, f.field, f.document
       from x cross join lateral (values ${perField.join(', ')}) as f(field, document)
       where f.document <> ''::tsvector
     ),
     wholes as (select w.id, w.document from (select x.id, ${all} as document from x) w where w.document <> ''::tsvector),
     fields_upserted as (
       insert into search_fields (entity_type, entity_key, field, document, updated_at)
       select ?, id, field, document, now() from fields
       on conflict (entity_type, entity_key, field)
       do update set document = excluded.document, updated_at = excluded.updated_at
       where search_fields.document is distinct from excluded.document
     ),
     wholes_upserted as (
       insert into search_documents (entity_type, entity_key, document, updated_at)
       select ?, id, document, now() from wholes
       on conflict (entity_type, entity_key)
       do update set document = excluded.document, updated_at = excluded.updated_at
       where search_documents.document is distinct from excluded.document
     ),
     wholes_deleted as (
       delete from search_documents d
       where d.entity_type = ? and d.entity_key = any(?::int[])
         and not exists (select 1 from wholes w where w.id = d.entity_key)
     )
     delete from search_fields s
     where s.entity_type = ? and s.entity_key = any(?::int[])
       and not exists (select 1 from fields d where d.id = s.entity_key and d.field = s.field)`,
    [keys, entity.name, entity.name, entity.name, keys, entity.name, keys],
  );
}

/** SQL listing root keys whose path reaches, at `depth`, any of the rows with keys `?` (an int array). */
function rootsReachingSql(root: EntityDefinition, steps: PathStep[], depth: number): string {
  const joins: string[] = [];
  let prev = 'r';
  for (let i = 0; i < depth; i++) {
    const step = steps[i]!;
    const a = `j${i}`;
    if (step.kind === 'relation') joins.push(`join ${step.target.def.table} ${a} on ${a}.id = ${prev}.${step.column}`);
    else if (step.kind === 'collection')
      joins.push(`join ${step.target.def.table} ${a} on ${a}.${step.foreignKey} = ${prev}.id`);
    prev = a;
  }
  return `select distinct r.id from ${root.table} r ${joins.join(' ')} where ${prev}.id = any(?::int[])`;
}

/**
 * Which documents a burst of events changes: each entity's own, plus every searchable entity whose
 * search path passes through it (renaming a Company re-indexes its Schemes; changing an Address, the
 * Schemes at it). A removed collection row is traced to its parent through the event's references.
 * Set-based: one lookup per search path step and changed entity type, whatever the burst's size.
 */
export async function affectedDocuments(
  knex: Knex,
  events: readonly DomainEvent[],
): Promise<Map<EntityDefinition, number[]>> {
  const out = new Map<EntityDefinition, Set<number>>();
  const add = (entity: EntityDefinition, keys: number[]) => {
    const set = out.get(entity) ?? new Set<number>();
    keys.forEach((k) => set.add(k));
    out.set(entity, set);
  };
  for (const [changed, group] of groupByEntity(events)) {
    // An update only changes the documents that show a member it changed: a PATCH of TotalUnits
    // rebuilds nothing. (An event without changedFields is taken to have changed everything.)
    const updated = `${changed.name}Updated`;
    const touches = (event: DomainEvent, member: string) =>
      event.name !== updated || !Array.isArray(event.changedFields) || event.changedFields.includes(member);
    for (const { entity, fields } of SEARCHABLE) {
      if (entity === changed) {
        const members = fields.map(([field]) => entity.searchFields[field]!.split('/', 1)[0]!);
        const keys = group.filter((event) => members.some((member) => touches(event, member)));
        add(
          entity,
          keys.map((event) => event.dbId),
        );
      }
      for (const [field, steps] of fields) {
        const segments = entity.searchFields[field]!.split('/');
        for (let i = 0; i < steps.length; i++) {
          const step = steps[i]!;
          if (step.kind === 'text' || step.target.def !== changed) continue;
          if (step.kind === 'collection') {
            // The parent one level up is named by the child's own reference: works after a delete.
            const relation = Object.entries(changed.relations).find(([, r]) => r.column === step.foreignKey);
            const parentKeys = relation
              ? group.map((event) => event.references?.[relation[0]]).filter((key): key is number => key != null)
              : [];
            if (parentKeys.length === 0) continue;
            if (i === 0) add(entity, parentKeys);
            else add(entity, await rootKeys(knex, entity, steps, i, parentKeys));
          } else {
            // A deleted row can no longer be referenced (foreign keys restrict), so fan-out through
            // a relation follows rows that still exist and changed the member shown there. A row just
            // created is referenced only by rows written after it commits, and each such write
            // rebuilds its own document from the rows as they are then: no fan-out either (an import
            // of Addresses with their Schemes would otherwise look every new Address up).
            const kept = group
              .filter(
                (event) =>
                  event.name !== `${changed.name}Deleted` &&
                  event.name !== `${changed.name}Created` &&
                  touches(event, segments[i + 1]!),
              )
              .map((event) => event.dbId);
            if (kept.length) add(entity, await rootKeys(knex, entity, steps, i + 1, kept));
          }
        }
      }
    }
  }
  return new Map([...out].map(([entity, keys]) => [entity, [...keys]]));
}

function groupByEntity(events: readonly DomainEvent[]): Map<EntityDefinition, DomainEvent[]> {
  const groups = new Map<EntityDefinition, DomainEvent[]>();
  for (const event of events) {
    const entity = entityByName(event.entityType);
    if (!entity) continue; // an entity this release does not know changes no document it keeps
    const group = groups.get(entity) ?? [];
    group.push(event);
    groups.set(entity, group);
  }
  return groups;
}

async function rootKeys(
  knex: Knex,
  root: EntityDefinition,
  steps: PathStep[],
  depth: number,
  keys: number[],
): Promise<number[]> {
  const result = await knex.raw<{ rows: { id: number }[] }>(rootsReachingSql(root, steps, depth), [keys]);
  return result.rows.map((r) => r.id);
}

/** First key of the advisory locks that serialise rebuilds of one entity type's documents. */
const SEARCH_LOCK_SPACE = 0x5ea4c4;
/** Keys per reindex statement. */
const REINDEX_CHUNK = 1000;

/**
 * Rebuilds the given documents in one transaction that first takes, per entity type, an advisory
 * lock shared by every rebuild of that type's documents (bursts and the full rebuild alike). Each
 * statement's snapshot is then taken after every earlier rebuild committed, so documents only move
 * forward: a rebuild that read an older row can never commit over one that read a newer row, as two
 * concurrent upserts could. Locks are taken in one order (entity index), so two bursts never deadlock.
 */
export async function reindexDocuments(knex: Knex, documents: Map<EntityDefinition, number[]>): Promise<number> {
  const work = [...documents]
    .filter(([entity, keys]) => keys.length > 0 && SEARCHABLE.some((s) => s.entity === entity))
    .sort(([a], [b]) => ENTITIES.indexOf(a) - ENTITIES.indexOf(b));
  if (work.length === 0) return 0;
  return knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?, e) from unnest(?::int[]) as e', [
      SEARCH_LOCK_SPACE,
      work.map(([entity]) => ENTITIES.indexOf(entity)),
    ]);
    let count = 0;
    for (const [entity, keys] of work) {
      for (let i = 0; i < keys.length; i += REINDEX_CHUNK) await reindex(trx, entity, keys.slice(i, i + REINDEX_CHUNK));
      count += keys.length;
    }
    return count;
  });
}

export interface RebuildProgress {
  entity: string;
  done: number;
  total: number;
}

/**
 * Rebuilds every search document in key-ordered batches. `resumeFrom` lets a restarted job go on
 * where it stopped (documents are idempotent, so overlap is harmless).
 */
export async function rebuildAllDocuments(
  knex: Knex,
  onProgress: (p: RebuildProgress & { lastKey: number; entityIndex: number }) => Promise<void>,
  resumeFrom: { entityIndex: number; lastKey: number } = { entityIndex: 0, lastKey: 0 },
  batchSize = 2000,
): Promise<{ documents: number }> {
  let documents = 0;
  for (let e = resumeFrom.entityIndex; e < SEARCHABLE.length; e++) {
    const { entity } = SEARCHABLE[e]!;
    const total = Number(((await knex(entity.table).count<{ n: number }[]>('* as n'))[0] as { n: number }).n);
    let lastKey = e === resumeFrom.entityIndex ? resumeFrom.lastKey : 0;
    let done = 0;
    for (;;) {
      const rows = (await knex(entity.table).where('id', '>', lastKey).orderBy('id').limit(batchSize).select('id')) as {
        id: number;
      }[];
      if (rows.length === 0) break;
      const keys = rows.map((r) => r.id);
      await reindexDocuments(knex, new Map([[entity, keys]]));
      lastKey = keys[keys.length - 1]!;
      done += keys.length;
      documents += keys.length;
      await onProgress({ entity: entity.name, done, total, lastKey, entityIndex: e });
    }
    // Documents of rows deleted while no worker ran.
    await knex.raw(
      `with wholes as (
         delete from search_documents d where d.entity_type = ? and not exists (select 1 from ${entity.table} r where r.id = d.entity_key)
       )
       delete from search_fields s where s.entity_type = ? and not exists (select 1 from ${entity.table} r where r.id = s.entity_key)`,
      [entity.name, entity.name],
    );
  }
  return { documents };
}
