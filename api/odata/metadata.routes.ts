import type { Request, RequestHandler, Response } from 'express';
import { badRequest } from '../../domain/errors/domain-error';
import { csdlJson } from './metadata/csdl-json';
import { csdlXml } from './metadata/csdl-xml';
import type { MetadataSettings } from './metadata/metadata-settings';
import { serviceDocument } from './metadata/service-document';
import { serviceRootOf } from './service-root';

/**
 * `GET /odata/` (the service document) and `GET /odata/$metadata` (DESIGN §17), open without a
 * token like `/openapi.json`. `$metadata` is CSDL XML unless JSON is asked for (`$format=json` or
 * an `Accept` that prefers `application/json`); both texts are built once per settings.
 */

export const MINIMAL_JSON = 'application/json;odata.metadata=minimal';

type MetadataFormat = 'xml' | 'json';

function formatOf(req: Request): MetadataFormat {
  const format = req.query.$format;
  if (format !== undefined) {
    if (typeof format !== 'string') throw badRequest('$format: given more than once');
    const type = format.split(';')[0]!.trim().toLowerCase();
    if (type === 'json' || type === 'application/json') return 'json';
    if (type === 'xml' || type === 'application/xml') return 'xml';
    throw badRequest(`$format: $metadata is offered as xml or json, not '${format}'`);
  }
  // XML unless the client ranks JSON first: `*/*`, no Accept and XML-only clients get XML.
  return req.accepts(['application/xml', 'application/json']) === 'application/json' ? 'json' : 'xml';
}

export function metadataHandlers(
  settings: MetadataSettings,
): Record<'odataServiceDocument' | 'odataMetadata', RequestHandler> {
  const xml = csdlXml(settings);
  const json = JSON.stringify(csdlJson(settings));
  return {
    odataServiceDocument: (req: Request, res: Response) => {
      res.type(MINIMAL_JSON).send(JSON.stringify(serviceDocument(serviceRootOf(req))));
    },
    odataMetadata: (req: Request, res: Response) => {
      if (formatOf(req) === 'json') res.type('application/json').send(json);
      else res.type('application/xml').send(xml);
    },
  };
}
