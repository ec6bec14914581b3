import { Model, type RelationMappings } from 'objection';
import { ENTITIES, OWNED_RECORDS, entityByName, ownedRecordByName, type EntityDefinition } from '../../domain/entities';

/**
 * Objection models derived from the domain definitions: one class per entity and owned record,
 * with every relation both ways (single relations as BelongsTo, collections as HasMany).
 * Columns keep their snake_case names; the read/write mappers translate to API member names.
 */

export type EntityModelClass = typeof Model & { entity?: EntityDefinition };

const models = new Map<string, EntityModelClass>();

function tableOf(typeName: string): string {
  return ownedRecordByName(typeName)?.table ?? entityByName(typeName).table;
}

function defineModel(
  name: string,
  table: string,
  relations: () => RelationMappings,
  entity?: EntityDefinition,
): EntityModelClass {
  const cls = class extends Model {
    static override get tableName(): string {
      return table;
    }
    static override get relationMappings(): RelationMappings {
      return relations();
    }
  };
  Object.defineProperty(cls, 'name', { value: `${name}Model` });
  (cls as EntityModelClass).entity = entity;
  return cls as EntityModelClass;
}

function relationMappingsFor(entity: EntityDefinition): RelationMappings {
  const mappings: RelationMappings = {};
  for (const [name, rel] of Object.entries(entity.relations)) {
    mappings[name] = {
      relation: Model.BelongsToOneRelation,
      modelClass: modelFor(rel.target),
      join: { from: `${entity.table}.${rel.column}`, to: `${tableOf(rel.target)}.id` },
    };
  }
  for (const [name, col] of Object.entries(entity.collections)) {
    mappings[name] = {
      relation: Model.HasManyRelation,
      modelClass: modelFor(col.target),
      join: { from: `${entity.table}.id`, to: `${tableOf(col.target)}.${col.foreignKey}` },
    };
  }
  return mappings;
}

for (const entity of ENTITIES) {
  models.set(
    entity.name,
    defineModel(entity.name, entity.table, () => relationMappingsFor(entity), entity),
  );
}
for (const record of OWNED_RECORDS) {
  models.set(
    record.name,
    defineModel(record.name, record.table, () => ({
      Scheme: {
        relation: Model.BelongsToOneRelation,
        modelClass: modelFor('Scheme'),
        join: { from: `${record.table}.scheme_id`, to: 'schemes.id' },
      },
    })),
  );
}

export function modelFor(typeName: string): EntityModelClass {
  const model = models.get(typeName);
  if (!model) throw new Error(`no model for ${typeName}`);
  return model;
}
