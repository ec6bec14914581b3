import {
  ENTITIES,
  entityByName,
  ownedRecordByName,
  referrersOf,
  type CollectionField,
  type EntityDefinition,
  type RelationField,
  type ScalarField,
} from '../entities';

/**
 * Who owns whom, derived from the definitions: owned collections are written inside their
 * parent's body (DESIGN §4) and deleted with it; everything else that points at a row blocks its
 * delete (DESIGN §6).
 */

/** The element type of an owned collection: an owned record (Note) or an entity (SchemeCompany). */
export interface OwnedItemType {
  /** Type name (also the Id codec's type). */
  name: string;
  table: string;
  /** Column of the child table that points at the parent. */
  foreignKey: string;
  fields: Record<string, ScalarField>;
  /** Relations written in the item; the back-reference to the parent is implied, so left out. */
  relations: Record<string, RelationField>;
  /** Name of the relation pointing back at the parent (`Scheme` of SchemeCompany), if an entity. */
  backReference?: string;
  /** Entity items carry their own CreatedAt/UpdatedAt (and a version trigger); owned records do not. */
  isEntity: boolean;
}

export interface OwnedCollection {
  name: string;
  collection: CollectionField;
  item: OwnedItemType;
}

function itemTypeOf(collection: CollectionField): OwnedItemType {
  const record = ownedRecordByName(collection.target);
  if (record) {
    return {
      name: record.name,
      table: record.table,
      foreignKey: collection.foreignKey,
      fields: record.fields,
      relations: {},
      isEntity: false,
    };
  }
  const target = entityByName(collection.target);
  const backReference = Object.entries(target.relations).find(([, r]) => r.column === collection.foreignKey)?.[0];
  const relations = Object.fromEntries(Object.entries(target.relations).filter(([name]) => name !== backReference));
  return {
    name: target.name,
    table: target.table,
    foreignKey: collection.foreignKey,
    fields: target.fields,
    relations,
    backReference,
    isEntity: true,
  };
}

const ownedCache = new Map<string, OwnedCollection[]>();

/** The owned collections a write body of `entity` carries (Scheme: Companies, Notes, …). */
export function ownedCollectionsOf(entity: EntityDefinition): OwnedCollection[] {
  let owned = ownedCache.get(entity.name);
  if (!owned) {
    owned = Object.entries(entity.collections)
      .filter(([, c]) => c.owned)
      .map(([name, collection]) => ({ name, collection, item: itemTypeOf(collection) }));
    ownedCache.set(entity.name, owned);
  }
  return owned;
}

/** A parent whose owned collection holds rows of an entity (SchemeCompany → Scheme.Companies). */
export interface OwningParent {
  parent: EntityDefinition;
  collection: string;
  /** The child's relation that names the parent (`Scheme`). */
  relation: string;
  column: string;
}

/**
 * Parents that own rows of `entity`. A child written through its own route still belongs to its
 * parent: the parent's version moves with it, so the parent's ETag tells the truth.
 */
export function owningParentsOf(entity: EntityDefinition): OwningParent[] {
  const out: OwningParent[] = [];
  for (const parent of ENTITIES) {
    for (const owned of ownedCollectionsOf(parent)) {
      if (owned.collection.target !== entity.name || !owned.item.backReference) continue;
      out.push({ parent, collection: owned.name, relation: owned.item.backReference, column: owned.item.foreignKey });
    }
  }
  return out;
}

/** Relations of other entities whose rows keep a row of `entity` from being deleted. */
export function blockingReferrersOf(
  entity: EntityDefinition,
): { entity: EntityDefinition; relation: string; column: string }[] {
  const cascaded = new Set(
    ownedCollectionsOf(entity)
      .filter((o) => o.item.isEntity)
      .map((o) => `${o.item.name}.${o.item.foreignKey}`),
  );
  return referrersOf(entity.name).filter((r) => !cascaded.has(`${r.entity.name}.${r.column}`));
}
