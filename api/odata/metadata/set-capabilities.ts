import type { EntityDefinition } from '../../../domain/entities';
import { ODATA_ROOT, ROUTES } from '../../routes/route-table';
import { isComplexCollection } from './structured-types';
import { EnumValue, PathValue, type AnnotationValue } from './vocabularies';
import type { MetadataSettings } from './metadata-settings';

/**
 * The Capabilities annotations of an entity set (DESIGN §17): what it allows, as the root serves it.
 */

/** The writes a set takes: what its `/odata` routes serve (read models are written by workers only: 405). */
export interface SetWrites {
  insert: boolean;
  patch: boolean;
  put: boolean;
  delete: boolean;
}

export function writesOf(entity: EntityDefinition): SetWrites {
  const operationsAt = (pattern: string) =>
    ROUTES.find((route) => route.root === ODATA_ROOT && route.pattern === pattern)?.operations ?? {};
  const set = operationsAt(`/${entity.route}`);
  const keyed = operationsAt(`/${entity.route}/{key}`);
  return { insert: !!set.POST, patch: !!keyed.PATCH, put: !!keyed.PUT, delete: !!keyed.DELETE };
}

/** `$search` takes terms (ANDed by whitespace), `OR` and `"phrases"`; `-term`, not `NOT`; no parentheses. */
const UNSUPPORTED_SEARCH = new EnumValue('Capabilities.SearchExpressions', ['NOT', 'group']);

const navigationPaths = (names: string[]) => names.map((name) => new PathValue('NavigationPropertyPath', name));

export function setCapabilities(entity: EntityDefinition, settings: MetadataSettings): Record<string, AnnotationValue> {
  const writes = writesOf(entity);
  const methods = [...(writes.patch ? ['PATCH'] : []), ...(writes.put ? ['PUT'] : [])];
  // Collections that are neither owned nor complex are written through their own set, not inside a body.
  const notDeep = Object.entries(entity.collections)
    .filter(([, c]) => !c.owned && !isComplexCollection(c))
    .map(([name]) => name);
  const expandable =
    Object.keys(entity.relations).length > 0 || Object.values(entity.collections).some((c) => !isComplexCollection(c));
  const lists = Object.entries(entity.fields)
    .filter(([, f]) => f.kind === 'stringList')
    .map(([name]) => new PathValue('PropertyPath', name));
  const searchable = Object.keys(entity.searchFields).length > 0;
  return {
    '@Capabilities.InsertRestrictions': {
      Insertable: writes.insert,
      ...(writes.insert && notDeep.length ? { NonInsertableNavigationProperties: navigationPaths(notDeep) } : {}),
    },
    '@Capabilities.UpdateRestrictions': {
      Updatable: methods.length > 0,
      // No UpdateMethod says "PATCH, and PUT may be served": said only when one method is all there is.
      // (PATCH and PUT as flags would be exact, but odata-openapi 0.29 reads one method and writes a
      // `patch,put` operation key that no OpenAPI validator accepts.)
      ...(methods.length === 1 ? { UpdateMethod: new EnumValue('Capabilities.HttpMethod', methods) } : {}),
    },
    '@Capabilities.DeleteRestrictions': { Deletable: writes.delete },
    '@Capabilities.SearchRestrictions': searchable
      ? { Searchable: true, UnsupportedExpressions: UNSUPPORTED_SEARCH }
      : { Searchable: false },
    '@Capabilities.ExpandRestrictions': expandable
      ? { Expandable: true, MaxLevels: settings.maxExpandDepth }
      : { Expandable: false },
    ...(lists.length ? { '@Capabilities.FilterRestrictions': { NonFilterableProperties: lists } } : {}),
    '@Capabilities.TopSupported': true,
    '@Capabilities.SkipSupported': true,
    '@Capabilities.CountRestrictions': { Countable: true },
  };
}
