import {
  entityByName,
  ownedRecordByName,
  type CollectionField,
  type EntityDefinition,
  type OwnedRecordDefinition,
  type RelationField,
  type ScalarField,
} from '../entities';

/**
 * The one resolver of property paths (`Address/Country/Name`, `Companies/Company/Name`) against
 * the definitions, used by read plans ($filter, $orderby, $expand) and by search paths.
 */

/** Something rows can be read from: an entity with a route, or an owned record (Notes, Tags…). */
export type RowSource = { kind: 'entity'; def: EntityDefinition } | { kind: 'owned'; def: OwnedRecordDefinition };

export function rowSource(typeName: string): RowSource {
  const owned = ownedRecordByName(typeName);
  return owned ? { kind: 'owned', def: owned } : { kind: 'entity', def: entityByName(typeName) };
}

export function entitySource(entity: EntityDefinition): RowSource {
  return { kind: 'entity', def: entity };
}

export function fieldsOf(source: RowSource): Record<string, ScalarField> {
  return source.def.fields;
}
export function relationsOf(source: RowSource): Record<string, RelationField> {
  return source.kind === 'entity' ? source.def.relations : {};
}
export function collectionsOf(source: RowSource): Record<string, CollectionField> {
  return source.kind === 'entity' ? source.def.collections : {};
}

/** Whether an `Id` of this source may be written as a bare integer (legacy keys). */
export function acceptsBareIntegers(source: RowSource): boolean {
  return source.kind === 'entity' && source.def.acceptsBareIntegerKeys;
}

/** A property of a row source (`on`) by name. */
export type Member =
  | { kind: 'id'; name: 'Id'; on: RowSource }
  | { kind: 'field'; name: string; on: RowSource; field: ScalarField }
  | { kind: 'relation'; name: string; on: RowSource; relation: RelationField; target: RowSource }
  | { kind: 'collection'; name: string; on: RowSource; collection: CollectionField; target: RowSource };

/**
 * Members by a client-given name: own properties only, so `constructor`, `__proto__` or
 * `toString` are unknown names rather than Object.prototype's (DESIGN §13).
 */
function own<T>(record: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

export function memberOf(on: RowSource, name: string): Member | undefined {
  if (name === 'Id') return { kind: 'id', name, on };
  const field = own(fieldsOf(on), name);
  if (field) return { kind: 'field', name, on, field };
  const relation = own(relationsOf(on), name);
  if (relation) return { kind: 'relation', name, on, relation, target: rowSource(relation.target) };
  const collection = own(collectionsOf(on), name);
  if (collection) return { kind: 'collection', name, on, collection, target: rowSource(collection.target) };
  return undefined;
}

/**
 * Walks `segments` from `root`, through relations and collections, as far as the names resolve.
 * `failure` says where and why it stopped: an unknown name, or a scalar (a field or `Id`) with
 * segments after it. Callers add their own rules (a filter refuses collections mid-path).
 */
export function resolvePath(
  root: RowSource,
  segments: readonly string[],
): { steps: Member[]; failure?: { index: number; reason: 'unknown' | 'scalar'; on: RowSource } } {
  const steps: Member[] = [];
  let source = root;
  for (let index = 0; index < segments.length; index++) {
    const member = memberOf(source, segments[index]!);
    if (!member) return { steps, failure: { index, reason: 'unknown', on: source } };
    steps.push(member);
    if (member.kind === 'relation' || member.kind === 'collection') source = member.target;
    else if (index < segments.length - 1) return { steps, failure: { index, reason: 'scalar', on: source } };
  }
  return { steps };
}
