import { pipeline } from 'node:stream/promises';
import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { badRequest, notAcceptable, tooManyRequests, unavailable } from '../../domain/errors/domain-error';
import { parseReadOptions, type ReadOptions } from '../../domain/queries/read-options';
import type { ReadLimits } from '../../domain/queries/read-limits';
import type { EntityDefinition } from '../../domain/entities';
import { exportHeader, openExportStream, type ExportFormat } from '../../db/query/entity-export';
import { planRead } from '../../db/query/read-plan';
import { routeOf } from '../routes/dispatch';
import { callerOf } from '../auth/caller';
import type { ExportSlots } from '../limits/export-slots';
import { dropWhenStalled } from '../limits/stall-guard';
import type { ReplicaSet } from '../../db/replicas/replica-set';
import { readAfter } from '../http/consistency';
import { MEDIA_TYPE, OFFERED, formatOfMediaType, rowFormatter } from './export-format';

export interface ExportRouteDeps {
  knex: Knex;
  /** Hot standbys exports read from (DATABASE_REPLICA_URLS). */
  replicas?: ReplicaSet;
  /** The read limits of DESIGN §13 ($filter / $search syntax nodes and the rest). */
  readLimits: ReadLimits;
  /**
   * Exports this process runs at once. Each holds a pooled connection for as long as its client
   * reads, so slow clients must not be able to take every connection from the read path.
   */
  maxConcurrent: number;
  /** Exports one subject may run at once, across every API process (MAX_EXPORTS_PER_SUBJECT). */
  slots: ExportSlots;
  maxPerSubject: number;
  /** A reader that takes no byte for this long is dropped (EXPORT_STALL_MS). */
  stallMs: number;
}

/** Half the pool for exports, the rest always left to ordinary reads and writes. */
export function exportConcurrencyFor(dbPoolMax: number): number {
  return Math.max(1, Math.floor(dbPoolMax / 2));
}

/** Query options an export honours; `$select` is accepted and ignored as on every read. */
export const EXPORT_OPTIONS = new Set(['$filter', '$orderby', '$search', '$select', 'searchFields']);

function exportOptions(query: Record<string, unknown>, limits: ReadLimits): ReadOptions {
  for (const name of Object.keys(query)) {
    if (EXPORT_OPTIONS.has(name)) continue;
    if (name === '$top' || name === '$skip' || name === '$count') {
      throw badRequest(`${name}: an export has no paging; it streams every matching row`);
    }
    if (name === '$expand')
      throw badRequest('$expand: exports carry relations as Ids (CSV) or owned collections (NDJSON)');
    if (name.startsWith('$')) throw badRequest(`unknown query option '${name}'`);
  }
  return parseReadOptions(query, limits);
}

/**
 * `GET /Export/<Entities>` (User or Admin, DESIGN §7): every row matching `$filter` and `$search`,
 * in `$orderby` order (relevance first when searching without one), streamed from a database cursor as CSV (default) or NDJSON, with backpressure end to end.
 * A client that goes away destroys the pipeline, which closes the cursor and frees its connection.
 */
export function exportHandler(deps: ExportRouteDeps): RequestHandler {
  let running = 0;

  const serve: RequestHandler = async (req: Request, res: Response) => {
    const entity = routeOf(req).entity!;
    const options = exportOptions(req.query as Record<string, unknown>, deps.readLimits);
    const mediaType = req.accepts([...OFFERED]);
    if (!mediaType) throw notAcceptable(`Exports are offered as ${OFFERED.join(' or ')}.`);
    const format = formatOfMediaType(mediaType as (typeof OFFERED)[number]);
    if (running >= deps.maxConcurrent) throw unavailable('Too many exports are running; try again shortly.');
    const slot = await deps.slots.acquire(callerOf(req).subject);
    if (!slot) {
      throw tooManyRequests(
        `Too many exports at once: at most ${deps.maxPerSubject} per caller (MAX_EXPORTS_PER_SUBJECT); wait for one to finish.`,
        5,
      );
    }
    running++;
    try {
      await streamExport(req, res, entity, options, format);
    } finally {
      running--;
      slot.release();
    }
  };

  async function streamExport(
    req: Request,
    res: Response,
    entity: EntityDefinition,
    options: ReadOptions,
    format: ExportFormat,
  ): Promise<void> {
    const plan = planRead(entity, options);
    const rows = deps.replicas
      ? await deps.replicas.run(await deps.replicas.choose(readAfter(req)), (knex) =>
          openExportStream(knex, plan, format),
        )
      : await openExportStream(deps.knex, plan, format);
    res.status(200);
    res.setHeader('Content-Type', MEDIA_TYPE[format]);
    res.setHeader('Content-Disposition', `attachment; filename="${entity.route}.${format}"`);
    res.setHeader('Cache-Control', 'no-store');
    res.vary('Accept');
    let stalled = false;
    const unwatch = dropWhenStalled(res, deps.stallMs, () => {
      stalled = true;
      req.log?.info({ entity: entity.name, stallMs: deps.stallMs }, 'export dropped: the client stopped reading');
    });
    try {
      await pipeline(rows, rowFormatter(format, exportHeader(entity)), res);
    } catch (err) {
      if (stalled) {
        // logged when dropped
      } else if ((err as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') {
        req.log?.info({ entity: entity.name }, 'export stopped: the client went away');
      } else {
        req.log?.error({ err, entity: entity.name }, 'export failed mid-stream');
      }
      res.destroy(); // the status line is gone: a cut connection is the only signal left
    } finally {
      unwatch();
    }
  }

  return serve;
}
