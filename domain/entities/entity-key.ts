import { READ_MODELS, entityByRoute, readableByRoute, type EntityDefinition } from './index';
import { methodNotAllowed, notFound } from '../errors/domain-error';
import { parseKey } from '../ids/id-codec';

/**
 * The entity or read model (`/Activities`) a read names, or a 404 naming the unknown route. Writes
 * do not come here: they reach entities only (entity-write.routes.ts answers 405 on read models).
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

/**
 * The entity a write names. Read models (`/Activities`) are written only by workers: 405. Other
 * unknown routes are undefined (the caller answers 404, or lets another route have them).
 */
export function writableEntityOf(route: string): EntityDefinition | undefined {
  if (READ_MODELS.some((model) => model.route === route)) throw methodNotAllowed(`/${route} is read-only.`, ['GET']);
  return entityByRoute(route);
}
