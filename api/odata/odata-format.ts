import type { Request } from 'express';
import { badRequest } from '../../domain/errors/domain-error';

/**
 * What an `/odata` read is asked to look like (DESIGN §17): the metadata level
 * (`odata.metadata=minimal|none|full`, from `$format` or `Accept`), and the page size a client
 * prefers (`Prefer: odata.maxpagesize=N`).
 */

export type MetadataLevel = 'minimal' | 'none' | 'full';

const LEVEL = /(?:^|;)\s*odata\.metadata\s*=\s*([a-z]+)\s*(?:;|,|$)/i;

function levelIn(mediaType: string, where: string): MetadataLevel | undefined {
  const level = LEVEL.exec(mediaType)?.[1]?.toLowerCase();
  if (level === undefined) return undefined;
  if (level === 'minimal' || level === 'none' || level === 'full') return level;
  throw badRequest(`${where}: odata.metadata is minimal, none or full, not '${level}'`);
}

/** The metadata level of a read; `$format` other than JSON is a 400 (reads come only as JSON). */
export function metadataLevelOf(req: Request): MetadataLevel {
  const format = req.query.$format;
  if (format !== undefined) {
    if (typeof format !== 'string') throw badRequest('$format: given more than once');
    const type = format.split(';')[0]!.trim().toLowerCase();
    if (type !== 'json' && type !== 'application/json') {
      throw badRequest(`$format: only json is offered here, not '${format}'`);
    }
    return levelIn(format, '$format') ?? 'minimal';
  }
  const accept = req.get('accept');
  const json = accept?.split(',').find((type) => /^\s*application\/json\b/i.test(type));
  return (json && levelIn(json, 'Accept')) || 'minimal';
}

/** The query options a read is planned from: `$format` is the envelope's, not the plan's. */
export function readQueryOf(req: Request): Record<string, unknown> {
  const { $format: _format, ...query } = req.query as Record<string, unknown>;
  return query;
}

const MAX_PAGE_SIZE = /(?:^|[,;])\s*odata\.maxpagesize\s*=\s*"?([0-9]+)"?\s*(?=[,;]|$)/i;

/** `Prefer: odata.maxpagesize=N`, bounded by MAX_TOP; undefined when not asked (or not a positive integer). */
export function preferredPageSize(req: Request, maxTop: number): number | undefined {
  const prefer = req.get('prefer');
  const asked = prefer === undefined ? undefined : MAX_PAGE_SIZE.exec(prefer)?.[1];
  if (asked === undefined) return undefined;
  const size = Number(asked);
  return size >= 1 ? Math.min(size, maxTop) : undefined;
}

/** What a write answers with: the entity (`representation`) or only its address (`minimal`). */
export type ReturnPreference = 'minimal' | 'representation';

const RETURN = /(?:^|,)\s*return\s*=\s*"?(minimal|representation)"?\s*(?=[,;]|$)/i;

/**
 * `Prefer: return=…` of an `/odata` write, read from a preference list as OData clients send it
 * (`return=minimal, odata.continue-on-error`); the root compares the whole value instead (DESIGN §10).
 */
export function returnPreference(req: Request): ReturnPreference | undefined {
  const prefer = req.get('prefer');
  const asked = prefer === undefined ? undefined : RETURN.exec(prefer)?.[1]?.toLowerCase();
  return asked === 'minimal' || asked === 'representation' ? asked : undefined;
}
