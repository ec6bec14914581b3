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
 * an `Accept` that ranks `application/json` above XML); both texts are built once per settings.
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
  // XML unless the client ranks JSON above it: XML is the default, so a tie is XML.
  const accept = req.get('accept');
  return accept !== undefined && quality(accept, 'application/json') > quality(accept, 'application/xml')
    ? 'json'
    : 'xml';
}

/**
 * The q-value an `Accept` header gives `type`: that of its most specific matching range (RFC 9110
 * 12.5.1), 0 when none matches. Unlike `req.accepts`, a wildcard ties with an exact match: axios's
 * `application/json, text/plain, *\/*` (the odata2ts generator's download) accepts XML as much as
 * JSON, and gets the default.
 */
function quality(accept: string, type: string): number {
  const [major] = type.split('/');
  let best = { specificity: -1, q: 0 };
  for (const range of accept.split(',')) {
    const [name = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const specificity = name === type ? 2 : name === `${major}/*` ? 1 : name === '*/*' ? 0 : -1;
    if (specificity <= best.specificity) continue;
    const q = params.find((param) => param.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    best = { specificity, q: Number.isFinite(value) ? value : 0 };
  }
  return best.q;
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
