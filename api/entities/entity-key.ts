import { entityByRoute, readableByRoute, type EntityDefinition } from '../../domain/entities';
import { notFound } from '../../domain/errors/domain-error';
import { parseKey } from '../../domain/ids/id-codec';

/**
 * The entity of a route segment, or a 404 problem naming the unknown route. Reads also reach the
 * read models (`/Activities`); writes reach entities only.
 */
export function entityOfRoute(route: string, access: 'read' | 'write' = 'write'): EntityDefinition {
  const entity = access === 'read' ? readableByRoute(route) : entityByRoute(route);
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
