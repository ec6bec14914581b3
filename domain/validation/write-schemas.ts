import type { ValidateFunction } from 'ajv';
import {
  READ_ONLY_MEMBERS,
  entityByName,
  type EntityDefinition,
  type RelationField,
  type ScalarField,
} from '../entities';
import { MAX_DB_ID } from '../ids/id-codec';
import { ownedCollectionsOf, type OwnedItemType } from '../writes/ownership';
import { NODE_KEYWORD, ajv } from './ajv-instance';

/**
 * JSON schemas of write bodies (POST, PUT, and the result of a PATCH), derived from the entity
 * definitions. Every node carries an `x-node` annotation saying what it stands for, so messages
 * are worded from the definition (error-messages.ts). Read-only members (`Id`, `CreatedAt`,
 * `UpdatedAt`) and collections that are not owned are accepted with any value and ignored, so a
 * client can PUT what it GETs; anything else unknown is an error.
 */

export type SchemaNode =
  | { kind: 'object'; entity: string }
  | { kind: 'field'; field: ScalarField }
  | { kind: 'relation'; relation: RelationField }
  | { kind: 'relationId' }
  | { kind: 'collection' }
  | { kind: 'itemId' };

type Schema = Record<string, unknown>;

const ANY: Schema = {};
/** Largest value an int4 column holds. */
const MAX_INTEGER = MAX_DB_ID;
/** ajv-formats' `date` accepts year 0000, which Postgres (and the calendar) does not have. */
const NOT_YEAR_ZERO = '^(?!0000)';
/** `uri` alone accepts any scheme (`mailto:`); DESIGN §4 means web addresses. */
const HTTP_SCHEME = '^[Hh][Tt][Tt][Pp][Ss]?://';

/** The limits a geometry is held to before it is parsed (domain/writes/geometry-limits.ts). */
const GEOMETRY_LIMITS_TEXT =
  'Well-known text (WKT) geometry: at most MAX_GEOMETRY_LENGTH characters (500,000 by default), MAX_GEOMETRY_VERTICES vertices (50,000) and MAX_GEOMETRY_DEPTH levels of parentheses (8); past any of them a 400 names the field and the limit.';

function node(n: SchemaNode): Schema {
  return { [NODE_KEYWORD]: n };
}

function nullable(type: string, required: boolean | undefined): string | string[] {
  return required ? type : [type, 'null'];
}

export function scalarSchema(field: ScalarField): Schema {
  const s: Schema = { ...node({ kind: 'field', field }) };
  switch (field.kind) {
    case 'integer':
      s.type = nullable('integer', field.required);
      s.maximum = field.maximum ?? MAX_INTEGER;
      s.minimum = field.minimum ?? -MAX_INTEGER;
      return s;
    case 'number':
      s.type = nullable('number', field.required);
      if (field.minimum !== undefined) s.minimum = field.minimum;
      if (field.maximum !== undefined) s.maximum = field.maximum;
      return s;
    case 'date':
      s.type = nullable('string', field.required);
      s.format = 'date';
      s.pattern = NOT_YEAR_ZERO;
      return s;
    case 'url':
      s.type = nullable('string', field.required);
      s.format = 'uri';
      s.pattern = HTTP_SCHEME;
      break;
    case 'wkt':
      s.type = nullable('string', field.required);
      s.format = 'wkt';
      s.description = GEOMETRY_LIMITS_TEXT;
      break;
    case 'datetime':
      s.type = nullable('string', field.required);
      s.format = 'date-time';
      break;
    case 'stringList':
      s.type = nullable('array', field.required);
      s.items = { type: 'string' };
      return s;
    default:
      s.type = nullable('string', field.required);
      if (field.pattern) s.pattern = field.pattern;
  }
  if (field.minLength !== undefined) s.minLength = field.minLength;
  if (field.maxLength !== undefined) s.maxLength = field.maxLength;
  return s;
}

/** Every member name a read of `typeName` can show: an expanded relation may carry them all. */
function memberNamesOf(entity: EntityDefinition): string[] {
  return ['Id', ...Object.keys(entity.fields), ...Object.keys(entity.relations), ...Object.keys(entity.collections)];
}

function relationSchema(relation: RelationField): Schema {
  const target = entityByName(relation.target);
  const properties: Schema = {};
  for (const name of memberNamesOf(target)) properties[name] = ANY;
  properties.Id = { type: 'string', ...node({ kind: 'relationId' }) };
  return {
    ...node({ kind: 'relation', relation }),
    type: nullable('object', relation.required),
    properties,
    required: ['Id'],
    additionalProperties: false,
  };
}

function objectSchema(
  entityName: string,
  fields: Record<string, ScalarField>,
  relations: Record<string, RelationField>,
  extra: Schema,
): Schema {
  // Definition order first: errors are listed in the order of the fields they concern.
  const properties: Schema = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(fields)) {
    if (field.readOnly) {
      properties[name] = ANY;
      continue;
    }
    properties[name] = scalarSchema(field);
    if (field.required) required.push(name);
  }
  for (const [name, relation] of Object.entries(relations)) {
    properties[name] = relationSchema(relation);
    if (relation.required) required.push(name);
  }
  for (const [name, schema] of Object.entries(extra)) if (!(name in properties)) properties[name] = schema;
  return {
    ...node({ kind: 'object', entity: entityName }),
    type: 'object',
    properties,
    required,
    additionalProperties: false,
  };
}

function itemSchema(item: OwnedItemType): Schema {
  // The item's own Id says which existing child it is; the back-reference is implied by the parent.
  const extra: Schema = { Id: { type: ['string', 'null'], ...node({ kind: 'itemId' }) } };
  if (item.backReference) extra[item.backReference] = ANY;
  return objectSchema(item.name, item.fields, item.relations, extra);
}

export function writeSchemaOf(entity: EntityDefinition): Schema {
  const extra: Schema = {};
  const owned = new Map(ownedCollectionsOf(entity).map((o) => [o.name, o.item]));
  for (const name of Object.keys(entity.collections)) {
    const item = owned.get(name);
    // A collection that is not owned is shown by reads and written through its own route.
    extra[name] = item ? { ...node({ kind: 'collection' }), type: 'array', items: itemSchema(item) } : ANY;
  }
  for (const member of READ_ONLY_MEMBERS) extra[member] = ANY;
  return objectSchema(entity.name, entity.fields, entity.relations, extra);
}

const compiled = new Map<string, ValidateFunction>();

/** The compiled validator of an entity's write body (compiled once per process). */
export function writeValidatorOf(entity: EntityDefinition): ValidateFunction {
  let validate = compiled.get(entity.name);
  if (!validate) {
    validate = ajv().compile(writeSchemaOf(entity));
    compiled.set(entity.name, validate);
  }
  return validate;
}
