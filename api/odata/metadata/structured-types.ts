import {
  entityByName,
  ownedRecordByName,
  type CollectionField,
  type EntityDefinition,
  type RelationField,
  type ScalarField,
} from '../../../domain/entities';
import { edmFacetsOf } from './edm-types';
import type { AnnotationValue } from './vocabularies';

/**
 * Entity types and complex types of `$metadata` (DESIGN §17), from the entity definitions: every
 * entity keyed by `Id`, fields as properties, relations and collections as navigation properties,
 * except the always-populated owned collections, which are collections of complex types (they come
 * with every read, as at the root, and are written inside their parent's body).
 */

export const NAMESPACE = 'EntityManagement';

type Csdl = Record<string, unknown>;
/** Terms and their values; an undefined value is left out. */
type Annotations = Record<string, AnnotationValue | undefined>;

export const qualified = (name: string): string => `${NAMESPACE}.${name}`;

/** A collection served as a collection of complex values rather than a navigation property. */
export const isComplexCollection = (collection: CollectionField): boolean => collection.alwaysPopulated === true;

/**
 * The complex type of a collection's items: an owned record keeps its name (Note, Tag); an entity
 * that also has its own set (SchemeMarketBoundary) needs another one, as types share a namespace.
 */
export const complexTypeNameOf = (collection: CollectionField): string =>
  ownedRecordByName(collection.target) ? collection.target : `${collection.target}Item`;

export function annotated(annotations: Annotations): Record<string, AnnotationValue> {
  const out: Record<string, AnnotationValue> = {};
  for (const [term, value] of Object.entries(annotations)) if (value !== undefined) out[`@${term}`] = value;
  return out;
}

function propertyOf(field: ScalarField): Csdl {
  // Read-only fields (CreatedAt, UpdatedAt) are stamped by the database: never null.
  const nullable = !field.required && !field.readOnly && field.kind !== 'stringList';
  return {
    ...edmFacetsOf(field),
    ...(nullable ? { $Nullable: true } : {}),
    ...annotated({
      'Core.Description': field.description,
      'Core.Computed': field.readOnly || undefined,
      'Core.IsURL': field.kind === 'url' || undefined,
      'Validation.Pattern': field.pattern,
      'Validation.Minimum': field.minimum,
      'Validation.Maximum': field.maximum,
    }),
  };
}

function relationOf(relation: RelationField, partner: string | undefined): Csdl {
  return {
    $Kind: 'NavigationProperty',
    $Type: qualified(relation.target),
    ...(relation.required ? {} : { $Nullable: true }),
    ...(partner ? { $Partner: partner } : {}),
  };
}

/** The collection of `target` that a relation of `owner` is the other side of (same foreign key). */
function collectionPartner(owner: EntityDefinition, relation: RelationField): string | undefined {
  const target = entityByName(relation.target);
  return Object.entries(target.collections).find(
    ([, c]) => !isComplexCollection(c) && c.target === owner.name && c.foreignKey === relation.column,
  )?.[0];
}

/** The relation of a collection's items that points back at `owner` through its foreign key. */
export function backReferenceOf(owner: EntityDefinition, collection: CollectionField): string | undefined {
  const target = ownedRecordByName(collection.target) ? undefined : entityByName(collection.target);
  if (!target) return undefined;
  return Object.entries(target.relations).find(
    ([, r]) => r.target === owner.name && r.column === collection.foreignKey,
  )?.[0];
}

function collectionOf(owner: EntityDefinition, collection: CollectionField): Csdl {
  const whole = owner.name;
  if (isComplexCollection(collection)) {
    const reduced = collection.listForm
      ? ` Lists show each item's reduced form: Id, ${collection.listForm.join(', ')}.`
      : '';
    return {
      $Collection: true,
      $Type: qualified(complexTypeNameOf(collection)),
      ...annotated({
        'Core.Description': `Always present. Written as part of the ${whole}'s body, replaced as a unit.${reduced}`,
      }),
    };
  }
  const partner = backReferenceOf(owner, collection);
  return {
    $Kind: 'NavigationProperty',
    $Collection: true,
    $Type: qualified(collection.target),
    ...(partner ? { $Partner: partner } : {}),
    ...(collection.owned
      ? annotated({ 'Core.Description': `Written as part of the ${whole}'s body (deep insert), replaced as a unit.` })
      : {}),
  };
}

export function entityTypeOf(entity: EntityDefinition): Csdl {
  const type: Csdl = {
    $Kind: 'EntityType',
    $Key: ['Id'],
    Id: annotated({ 'Core.Computed': true, 'Core.Description': `The encoded ${entity.name} Id.` }),
  };
  for (const [name, field] of Object.entries(entity.fields)) type[name] = propertyOf(field);
  for (const [name, relation] of Object.entries(entity.relations)) {
    type[name] = relationOf(relation, collectionPartner(entity, relation));
  }
  for (const [name, collection] of Object.entries(entity.collections)) type[name] = collectionOf(entity, collection);
  Object.assign(type, annotated({ 'Core.Description': entity.description }));
  return type;
}

/**
 * The complex type of a collection's items: `Id` (a client names an existing item with it, or
 * leaves it out for a new one: ComputedDefaultValue), the fields and the relations, except the one
 * back to the parent, which the parent implies.
 */
export function complexTypeOf(owner: EntityDefinition, collection: CollectionField): Csdl {
  const record = ownedRecordByName(collection.target);
  const entity = record ? undefined : entityByName(collection.target);
  const back = backReferenceOf(owner, collection);
  const type: Csdl = {
    $Kind: 'ComplexType',
    Id: annotated({ 'Core.ComputedDefaultValue': true }),
  };
  for (const [name, field] of Object.entries((record ?? entity)!.fields)) type[name] = propertyOf(field);
  for (const [name, relation] of Object.entries(entity?.relations ?? {})) {
    if (name !== back) type[name] = relationOf(relation, undefined);
  }
  Object.assign(type, annotated({ 'Core.Description': (record ?? entity)!.description }));
  return type;
}
