import { readableByRoute, type EntityDefinition } from './index';
import { notFound } from '../errors/domain-error';
import { parseKey } from '../ids/id-codec';

/**
 * The entity or read model (`/Activities`) a read names, or a 404 naming the unknown route. Writes
 * do not come here: the route table (api/routes/route-table.ts) gives read models no write routes (405).
 */
export function readableEntityOf(route: string): EntityDefinition {
  const entity = readableByRoute(route);
  if (!entity) throw notFound(`No entity route '/${route}'.`);
  return entity;
}

/**
 * The primary key a URL key names (spec 2.3): bare integers only on the five routes that accept
 * them, canonical encoded Ids elsewhere. Anything undecodable is simply "not found" (DESIGN §10).
 */
export function keyOf(entity: EntityDefinition, key: string): number {
  const id = parseKey(entity.name, key, entity.acceptsBareIntegerKeys);
  if (id === null) throw notFound(`${entity.name} '${key}' does not exist.`);
  return id;
}
