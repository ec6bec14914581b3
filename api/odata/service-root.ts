import type { Request } from 'express';
import { ODATA_ROOT } from '../routes/route-table';

/**
 * The absolute URL of the OData service root as this request reached it (`http://host:3000/odata`):
 * context URLs, next links and, with `odata.metadata=full`, entity ids are absolute (DESIGN §17).
 */
export function serviceRootOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}${ODATA_ROOT}`;
}
