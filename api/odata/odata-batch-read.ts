import type { BatchRead, BatchWrite } from '../../domain/batch/batch-command';
import type { BatchRequest } from '../../domain/batch/batch-request';
import { DEFAULT_TOP } from '../../domain/queries/read-options';
import type { BatchTarget } from '../batch/batch-request-checks';
import { NAMESPACE } from './metadata/structured-types';
import { metadataLevelFrom, pageSizeFrom, returnPreferenceFrom } from './odata-format';
import { odataWriteCommandOf } from './odata-write-command';
import { navigationContext } from './odata-read.routes';

/**
 * A GET inside `/odata/$batch` (DESIGN §17): what the same request alone asks of its read
 * (odata-read.routes.ts) — the metadata level from `$format` or `Accept`, the page size from
 * `Prefer: odata.maxpagesize`, a navigation property, `$select` in the context URL — taken from the
 * request's own URL and headers. The command worker reads it as db/query/odata-read.ts does.
 */
export function odataBatchReadOf(serviceRoot: string, maxTop: number) {
  return (target: BatchTarget, request: BatchRequest): BatchRead => {
    const { $format: format, ...query } = target.query;
    const level = metadataLevelFrom(format, request.headers.accept);
    const asked = pageSizeFrom(request.headers.prefer, maxTop);
    const { navigation, navigationKey } = target.params;
    const set =
      navigation === undefined ? target.entity.route : navigationContext(target.entity, target.key, navigation);
    const select = query.$select;
    const selected = typeof select === 'string' && select.trim() !== '' ? `(${select})` : '';
    const ifNoneMatch = request.headers['if-none-match'];
    return {
      route: target.entity.route,
      query,
      ...(target.key === undefined ? {} : { key: target.key }),
      ...(target.keyReference === undefined ? {} : { keyReference: target.keyReference }),
      ...(target.count ? { count: true } : {}),
      ...(ifNoneMatch === undefined ? {} : { ifNoneMatch }),
      odata: {
        ...(navigation === undefined ? {} : { navigation }),
        ...(navigationKey === undefined ? {} : { navigationKey }),
        pageSize: asked ?? Math.min(DEFAULT_TOP, maxTop),
        pageSizeApplied: asked !== undefined,
        control: {
          etag: level !== 'none',
          ...(level === 'full' ? { full: { serviceRoot, namespace: NAMESPACE } } : {}),
        },
        level,
        contextSet: `${set}${selected}`,
      },
    };
  };
}

/**
 * A write inside `/odata/$batch`: built by the builder of the same request alone
 * (odata-write-command.ts), answered as it is (odata-write.routes.ts) — the entity after a create,
 * nothing after an update, unless `Prefer: return=` says otherwise; the representation at the
 * metadata level of `$format` or `Accept`.
 */
export function odataBatchWriteOf(serviceRoot: string) {
  return (target: BatchTarget, request: BatchRequest) => {
    const level = metadataLevelFrom(target.query.$format, request.headers.accept);
    const asked = returnPreferenceFrom(request.headers.prefer);
    const returns = asked ?? (target.kind === 'create' ? 'representation' : 'minimal');
    const odata: NonNullable<BatchWrite['odata']> = {
      control: {
        etag: level !== 'none',
        ...(level === 'full' ? { full: { serviceRoot, namespace: NAMESPACE } } : {}),
      },
      level,
      ...(asked === undefined ? {} : { asked }),
    };
    return {
      commandOf: odataWriteCommandOf,
      representation: target.kind !== 'delete' && returns === 'representation',
      odata,
    };
  };
}
