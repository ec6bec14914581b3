import type { BatchRead, BatchStep } from '../../domain/batch/batch-command';
import { readRowsOf } from '../../domain/batch/batch-read-rows';
import { entityByName, readableByRoute } from '../../domain/entities';
import { badRequest, DomainError } from '../../domain/errors/domain-error';
import { parseReadOptions, type ReadOptions } from '../../domain/queries/read-options';
import type { ReadLimits } from '../../domain/queries/read-limits';

/**
 * BATCH_MAX_READ_ROWS (DESIGN §13): the rows a batch's GETs may read, summed over them from their
 * options before anything is queued. A batch past it is one 400 and nothing runs: refusing it
 * whole keeps a batch all-or-nothing about its budget, and the client learns which request weighs
 * most. A GET whose options do not parse weighs nothing here: it answers its own 400 unrun.
 */

/** An `/odata` read's page: `$top` limits the whole result, a page holds `odata.maxpagesize` of it (DESIGN §17). */
function odataPage(read: BatchRead, options: ReadOptions): ReadOptions {
  const top = read.query.$top === undefined ? Number.MAX_SAFE_INTEGER : options.top;
  return { ...options, top: Math.min(top, read.odata!.pageSize) };
}

function rowsOfStep(step: BatchStep, limits: ReadLimits): number {
  const read = step.read;
  if (!read || step.failure) return 0;
  let entity = readableByRoute(read.route);
  if (!entity) return 0;
  try {
    let options = parseReadOptions(read.query, limits);
    let keyed = read.key !== undefined || read.keyReference !== undefined;
    if (read.odata) {
      // A navigation reads its target: one entity through a relation, a page of a collection.
      const navigation = read.odata.navigation;
      const relation = navigation !== undefined && Object.hasOwn(entity.relations, navigation);
      const collection = navigation !== undefined && Object.hasOwn(entity.collections, navigation);
      if (relation) entity = entityByName(entity.relations[navigation]!.target);
      // A member by key, or a complex collection property (read with its entity), is one row.
      if (collection && read.odata.navigationKey === undefined && !entity.collections[navigation]!.alwaysPopulated) {
        entity = entityByName(entity.collections[navigation]!.target);
        keyed = false;
      } else if (collection) keyed = true;
      options = odataPage(read, options);
    }
    return readRowsOf(entity, options, read.count ? 'count' : keyed ? 'keyed' : 'page');
  } catch (err) {
    if (err instanceof DomainError) return 0;
    throw err;
  }
}

const plain = (n: number) => n.toLocaleString('en');

/** Throws the 400 when the GETs of `steps` may read more than `maxRows` rows in all. */
export function checkBatchReadRows(steps: readonly BatchStep[], limits: ReadLimits, maxRows: number): void {
  let total = 0;
  let heaviest: { id: string; rows: number } | undefined;
  for (const step of steps) {
    const rows = rowsOfStep(step, limits);
    total += rows;
    if (rows > (heaviest?.rows ?? 0)) heaviest = { id: step.id, rows };
  }
  if (total <= maxRows) return;
  throw badRequest(
    `The GETs of this batch may read up to ${plain(total)} rows (from their $top, $skip and $expand), more than the ${plain(maxRows)} a batch may read (BATCH_MAX_READ_ROWS); nothing was run. The heaviest is '${heaviest!.id}' (up to ${plain(heaviest!.rows)} rows): lower $top, expand less, or split the batch.`,
  );
}
