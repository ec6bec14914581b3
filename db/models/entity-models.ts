import { Model } from 'objection';
import { ENTITIES, type EntityDefinition } from '../../domain/entities';

/**
 * Objection models of the entity tables, one class per entity, for the row writes of
 * db/commands/entity-rows.ts. They carry no relation mappings: reads are compiled to SQL from the
 * definitions (db/query) and owned collections are written by db/commands/owned-collections.ts.
 * Columns keep their snake_case names; the read/write mappers translate to API member names.
 */

const models = new Map<string, typeof Model>();

function defineModel(entity: EntityDefinition): typeof Model {
  const cls = class extends Model {
    static override get tableName(): string {
      return entity.table;
    }
  };
  Object.defineProperty(cls, 'name', { value: `${entity.name}Model` });
  return cls;
}

for (const entity of ENTITIES) models.set(entity.name, defineModel(entity));

export function modelFor(typeName: string): typeof Model {
  const model = models.get(typeName);
  if (!model) throw new Error(`no model for ${typeName}`);
  return model;
}
