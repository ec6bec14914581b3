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

/**
 * GET under `/odata` (DESIGN §17): a set, its `$count`, an entity by key, a navigation property of
 * one. Policies, replicas, limits and the read itself are the root's (entity-read.routes.ts); the
 * answer is OData JSON (odata-answer.ts).
 */

type Handlers = Record<
  'odataList' | 'odataCount' | 'odataEntity' | 'odataNavigation' | 'odataNavigationCount',
  RequestHandler
>;

/** The set a navigation property leads to, for the context URL (an unknown one is the read's 404). */
export function navigationSet(entity: EntityDefinition, navigation: string): string {
  const target =
    (Object.hasOwn(entity.relations, navigation) && entity.relations[navigation]?.target) ||
    (Object.hasOwn(entity.collections, navigation) && entity.collections[navigation]?.target);
  return target ? entityByName(target).route : navigation;
}

export function odataReadHandlers(deps: ReadRouteDeps): Handlers {
  const settings = readSettingsOf(deps);
  const runFor = readRouter(deps.knex, deps.replicas, settings.timeoutMs);

  const read =
    (shape: (req: Request) => Pick<ODataReadRequest, 'key' | 'navigation' | 'count'>): RequestHandler =>
    async (req: Request, res: Response) => {
      const entity = routeOf(req).entity!;
      const level = metadataLevelOf(req);
      const serviceRoot = serviceRootOf(req);
      const pageSize = preferredPageSize(req, settings.limits.maxTop);
      const query = readQueryOf(req);
      const { key, navigation, count } = shape(req);
      const request: ODataReadRequest = {
        set: entity.route,
        key,
        navigation,
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
      const set = navigation === undefined ? entity.route : navigationSet(entity, navigation);
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
    odataNavigationCount: read((req) => ({
      key: req.params.key as string,
      navigation: req.params.navigation as string,
      count: true,
    })),
  };
}
