import type { RequestHandler } from 'express';
import { notAcceptable } from '../../domain/errors/domain-error';
import { ODATA_ROOT } from '../routes/route-table';

/**
 * What every answer under the OData service root (DESIGN §17) has in common: `OData-Version: 4.0`
 * (errors included), and a 406 for a client that reads only versions before 4.0.
 */

export const ODATA_VERSION = '4.0';

/** `/odata` or a path under it, in any case: tested without lower-casing a copy of every request's path. */
const UNDER_ROOT = new RegExp(`^${ODATA_ROOT}(?:/|$)`, 'i'); // the root is a slash and letters

/** Whether a path lies under `/odata` (the service root itself included). */
export function underODataRoot(path: string): boolean {
  return UNDER_ROOT.test(path);
}

/** `OData-MaxVersion: 4.01`, `4.0`: the version a client reads up to; anything unreadable is refused too. */
function readsVersion4(maxVersion: string): boolean {
  const version = /^\s*(\d+)\.(\d+)\s*$/.exec(maxVersion);
  return version !== null && Number(version[1]) >= 4;
}

export function odataProtocol(): RequestHandler {
  return (req, res, next) => {
    if (!underODataRoot(req.path)) return next();
    res.setHeader('OData-Version', ODATA_VERSION);
    const maxVersion = req.get('odata-maxversion');
    if (maxVersion !== undefined && !readsVersion4(maxVersion)) {
      return next(notAcceptable(`OData-MaxVersion ${maxVersion}: this service speaks OData 4.0 only.`));
    }
    next();
  };
}
