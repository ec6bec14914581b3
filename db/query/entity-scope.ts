import {
  entityByName,
  ownedRecordByName,
  type CollectionField,
  type EntityDefinition,
  type OwnedRecordDefinition,
  type RelationField,
  type ScalarField,
} from '../../domain/entities';
import { SqlContext, queryError } from './sql-context';

/** Something rows can be read from: an entity with a route, or an owned record (Notes, Tags…). */
export type RowSource = { kind: 'entity'; def: EntityDefinition } | { kind: 'owned'; def: OwnedRecordDefinition };

export function rowSource(typeName: string): RowSource {
  const owned = ownedRecordByName(typeName);
  return owned ? { kind: 'owned', def: owned } : { kind: 'entity', def: entityByName(typeName) };
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

/**
 * Members of a definition by a client-given name: own properties only, so `constructor`,
 * `__proto__` or `toString` are unknown names rather than Object.prototype's (DESIGN §13).
 */
function own<T>(record: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}
export function fieldOf(source: RowSource, name: string): ScalarField | undefined {
  return own(fieldsOf(source), name);
}
export function relationOf(source: RowSource, name: string): RelationField | undefined {
  return own(relationsOf(source), name);
}
export function collectionOf(source: RowSource, name: string): CollectionField | undefined {
  return own(collectionsOf(source), name);
}

/** What a property path resolved to. */
export type Resolved =
  | { kind: 'scalar'; sql: string; field: ScalarField; name: string }
  /** An `Id` (the row's own or a relation's): compared by decoding the client's encoded value. */
  | { kind: 'id'; sql: string; typeName: string; acceptsBareIntegers: boolean }
  | { kind: 'collection'; source: RowSource; collection: CollectionField; parentAlias: string; name: string };

/**
 * The rows a filter or ordering is evaluated against, with the left joins that single-valued
 * navigation paths need (many-to-one, so joins never multiply rows). Lambda bodies get a child
 * scope whose variable names the collection row; other paths there resolve against the parent.
 */
export class EntityScope {
  private readonly joins = new Map<string, { alias: string; source: RowSource }>();
  readonly joinSql: string[] = [];

  constructor(
    readonly source: RowSource,
    readonly alias: string,
    readonly ctx: SqlContext,
    readonly option: string,
    readonly variable: string | null = null,
    readonly parent: EntityScope | null = null,
  ) {}

  resolve(segments: string[], position: number): Resolved {
    if (this.variable !== null) {
      if (segments[0] === this.variable) return this.resolveFrom(segments.slice(1), position);
      if (this.parent) return this.parent.resolve(segments, position);
    }
    return this.resolveFrom(segments, position);
  }

  private resolveFrom(segments: string[], position: number): Resolved {
    if (segments.length === 0) throw queryError(this.option, 'a lambda variable needs a property after it', position);
    let source = this.source;
    let alias = this.alias;
    let prefix = '';
    for (let i = 0; i < segments.length; i++) {
      const name = segments[i]!;
      const last = i === segments.length - 1;
      if (name === 'Id') {
        if (!last) throw queryError(this.option, `'Id' has no properties`, position);
        return {
          kind: 'id',
          sql: `${alias}.id`,
          typeName: source.def.name,
          acceptsBareIntegers: source.kind === 'entity' && source.def.acceptsBareIntegerKeys,
        };
      }
      const field = fieldOf(source, name);
      if (field) {
        if (!last) throw queryError(this.option, `'${name}' has no properties`, position);
        return { kind: 'scalar', sql: `${alias}.${field.column}`, field, name };
      }
      const relation = relationOf(source, name);
      if (relation) {
        const target = rowSource(relation.target);
        // `Relation/Id` (and `Relation eq null`) need no join: the foreign key is the related key.
        if (last || (segments[i + 1] === 'Id' && i + 1 === segments.length - 1)) {
          return {
            kind: 'id',
            sql: `${alias}.${relation.column}`,
            typeName: target.def.name,
            acceptsBareIntegers: target.kind === 'entity' && target.def.acceptsBareIntegerKeys,
          };
        }
        prefix = `${prefix}/${name}`;
        alias = this.join(prefix, target, `${alias}.${relation.column}`);
        source = target;
        continue;
      }
      const collection = collectionOf(source, name);
      if (collection) {
        if (!last)
          throw queryError(
            this.option,
            `'${name}' is a collection: use ${name}/any(...) or ${name}/all(...)`,
            position,
          );
        return { kind: 'collection', source: rowSource(collection.target), collection, parentAlias: alias, name };
      }
      throw queryError(this.option, `unknown property '${name}' of ${source.def.name}`, position);
    }
    throw queryError(this.option, 'empty property path', position);
  }

  private join(key: string, target: RowSource, foreignKeySql: string): string {
    const existing = this.joins.get(key);
    if (existing) return existing.alias;
    const alias = this.ctx.alias();
    this.joins.set(key, { alias, source: target });
    this.joinSql.push(`left join ${target.def.table} ${alias} on ${alias}.id = ${foreignKeySql}`);
    return alias;
  }
}
