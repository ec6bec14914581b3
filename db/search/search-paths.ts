import type { EntityDefinition } from '../../domain/entities';
import { entitySource, resolvePath, type RowSource } from '../../domain/queries/path-resolver';

/**
 * A search field's property path (`Companies/Company/Name`) walked through the definitions: each
 * step is a single relation (foreign key on the current row), a collection (foreign key on the
 * child) or, last, the text column.
 */
export type PathStep =
  | { kind: 'relation'; column: string; target: RowSource }
  | { kind: 'collection'; foreignKey: string; target: RowSource }
  | { kind: 'text'; column: string };

export function walkPath(entity: EntityDefinition, path: string): PathStep[] {
  const segments = path.split('/');
  const { steps, failure } = resolvePath(entitySource(entity), segments);
  const unusable = (name: string) =>
    new Error(`search path ${entity.name}.${path}: '${name}' is not a usable property`);
  const walked = steps.map((step, i): PathStep => {
    const last = i === segments.length - 1;
    if (step.kind === 'field' && last) return { kind: 'text', column: step.field.column };
    if (step.kind === 'relation' && !last)
      return { kind: 'relation', column: step.relation.column, target: step.target };
    if (step.kind === 'collection' && !last) {
      return { kind: 'collection', foreignKey: step.collection.foreignKey, target: step.target };
    }
    throw unusable(step.name);
  });
  if (failure) throw unusable(segments[failure.index]!);
  return walked;
}

/** SQL text of a search path for the row under `alias` (collections joined by spaces). */
export function pathTextSql(steps: PathStep[], alias: string, depth = 0): string {
  const [step, ...rest] = steps;
  if (!step) throw new Error('empty search path');
  const a = `s${depth}`;
  switch (step.kind) {
    case 'text':
      return `${alias}.${step.column}`;
    case 'relation':
      return `(select ${pathTextSql(rest, a, depth + 1)} from ${step.target.def.table} ${a} where ${a}.id = ${alias}.${step.column})`;
    case 'collection':
      return `(select string_agg(${pathTextSql(rest, a, depth + 1)}, ' ') from ${step.target.def.table} ${a} where ${a}.${step.foreignKey} = ${alias}.id)`;
  }
}

/** Every entity offering search, with its walked paths. */
export function searchableEntities(
  all: readonly EntityDefinition[],
): { entity: EntityDefinition; fields: [string, PathStep[]][] }[] {
  return all
    .filter((e) => Object.keys(e.searchFields).length > 0)
    .map((entity) => ({
      entity,
      fields: Object.entries(entity.searchFields).map(
        ([field, path]) => [field, walkPath(entity, path)] as [string, PathStep[]],
      ),
    }));
}
