import type { Request, RequestHandler, Response } from 'express';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { DEFAULT_TOP } from '../../domain/queries/read-options';
import { odataReadOperation, type ODataReadRequest } from '../../db/query/odata-read';
import { readSettingsOf } from '../../db/query/read-operation';
import { readRouter } from '../../db/replicas/read-router';
import type { ReadRouteDeps } from '../entities/entity-read.routes';
import { readAfter } from '../http/consistency';
import { sendAnswer } from '../http/send-answer';
import { routeOf } from '../routes/dispatch';
import { NAMESPACE } from './metadata/structured-types';
import { odataReadAnswer } from './odata-answer';
import { metadataLevelOf, preferredPageSize, readQueryOf } from './odata-format';
import { serviceRootOf } from './service-root';
import { keyPredicateOf } from '../../domain/odata/key-predicate';

/**
 * GET under `/odata` (DESIGN §17): a set, its `$count`, an entity by key, a navigation property of
 * one (and a member of a navigation collection by key), a complex collection property of one.
 * Policies, replicas, limits and the read itself are the root's (entity-read.routes.ts); the
 * answer is OData JSON (odata-answer.ts).
 */

type Handlers = Record<
  'odataList' | 'odataCount' | 'odataEntity' | 'odataNavigation' | 'odataNavigationCount' | 'odataNavigationMember',
  RequestHandler
>;

/** The set a navigation property leads to, for the context URL (an unknown one is the read's 404). */
export function navigationSet(entity: EntityDefinition, navigation: string): string {
  const target =
    (Object.hasOwn(entity.relations, navigation) && entity.relations[navigation]?.target) ||
    (Object.hasOwn(entity.collections, navigation) && entity.collections[navigation]?.target);
  return target ? entityByName(target).route : navigation;
}

/**
 * The context URL's path of a navigation read: the set it leads to, or for a complex collection
 * property (`Notes`) the property of the keyed entity (`Schemes('k')/Notes`), as OData has it.
 */
export function navigationContext(entity: EntityDefinition, key: string | undefined, navigation: string): string {
  const property = Object.hasOwn(entity.collections, navigation) && entity.collections[navigation]?.alwaysPopulated;
  // A `$batch` step keyed by a reference (`$1/Notes`) has no key yet: the set is named instead.
  if (!property || key === undefined) return navigationSet(entity, navigation);
  return `${entity.route}${keyPredicateOf(key)}/${navigation}`;
}

export function odataReadHandlers(deps: ReadRouteDeps): Handlers {
  const settings = readSettingsOf(deps);
  const runFor = readRouter(deps.knex, deps.replicas, settings.timeoutMs);

  const read =
    (
      shape: (req: Request) => Pick<ODataReadRequest, 'key' | 'navigation' | 'navigationKey' | 'count'>,
    ): RequestHandler =>
    async (req: Request, res: Response) => {
      const entity = routeOf(req).entity!;
      const level = metadataLevelOf(req);
      const serviceRoot = serviceRootOf(req);
      const pageSize = preferredPageSize(req, settings.limits.maxTop);
      const query = readQueryOf(req);
      const { key, navigation, navigationKey, count } = shape(req);
      const request: ODataReadRequest = {
        set: entity.route,
        key,
        navigation,
        navigationKey,
        count,
        query,
        pageSize: pageSize ?? Math.min(DEFAULT_TOP, settings.limits.maxTop),
        control: {
          etag: level !== 'none',
          ...(level === 'full' ? { full: { serviceRoot, namespace: NAMESPACE } } : {}),
        },
        ifNoneMatch: req.headers['if-none-match'],
      };
      const result = await odataReadOperation(runFor(readAfter(req)), request, settings);
      const set = navigation === undefined ? entity.route : navigationContext(entity, key, navigation);
      const selected = typeof query.$select === 'string' && query.$select.trim() !== '' ? `(${query.$select})` : '';
      const single = key !== undefined && (navigation === undefined || result.kind === 'entity');
      const context = `${set}${selected}${single ? '/$entity' : ''}`;
      sendAnswer(res, odataReadAnswer(result, { serviceRoot, context, level, pageSize }));
    };

  return {
    odataList: read(() => ({})),
    odataCount: read(() => ({ count: true })),
    odataEntity: read((req) => ({ key: req.params.key as string })),
    odataNavigation: read((req) => ({ key: req.params.key as string, navigation: req.params.navigation as string })),
    odataNavigationMember: read((req) => ({
      key: req.params.key as string,
      navigation: req.params.navigation as string,
      navigationKey: req.params.navigationKey as string,
    })),
    odataNavigationCount: read((req) => ({
      key: req.params.key as string,
      navigation: req.params.navigation as string,
      count: true,
    })),
  };
}
