import { entityByName, type EntityDefinition } from '../entities';
import type { ExpandItem } from '../odata';
import type { ReadOptions } from '../queries/read-options';

/**
 * The read work of a `$batch` GET as an upper bound on the rows it may read (DESIGN §13,
 * BATCH_MAX_READ_ROWS), known from its options before anything runs: the rows of its page (`$top`,
 * plus the `$skip`ped rows Postgres reads past), each times one for itself plus what its
 * expansions may add per row. A single related entity adds one row; an expanded collection its own
 * `$top` (and `$skip`), else MAX_EXPAND_TOP; nested expansions multiply. The owned records every
 * read shows (Notes, Tags, links) are not counted: their size is bounded by the writes' limits.
 */

/** The entity a navigation property leads to, and how many rows it may add per row of `from`. */
function step(from: EntityDefinition, name: string, options: ExpandItem['options'], last: boolean, expandTop: number) {
  const relation = Object.hasOwn(from.relations, name) ? from.relations[name] : undefined;
  const collection = Object.hasOwn(from.collections, name) ? from.collections[name] : undefined;
  if (!relation && !collection) return undefined;
  const perRow = relation ? 1 : last ? (options.top ?? expandTop) + (options.skip ?? 0) : expandTop;
  const target = (relation ?? collection)!.target;
  let entity: EntityDefinition | undefined;
  try {
    entity = entityByName(target);
  } catch {
    entity = undefined; // an owned record type: nothing expands below it
  }
  return { perRow, entity };
}

/** Rows the expansions `items` may add to each row of `entity`. */
function expandedRows(entity: EntityDefinition, items: readonly ExpandItem[], expandTop: number): number {
  let rows = 0;
  for (const item of items) {
    let from: EntityDefinition | undefined = entity;
    let reach = 1;
    for (const [i, name] of item.path.entries()) {
      const next: ReturnType<typeof step> =
        from && step(from, name, item.options, i === item.path.length - 1, expandTop);
      if (!next) break; // an unknown property: the read itself answers its 400
      reach *= next.perRow;
      rows += reach;
      from = next.entity;
    }
    if (from && item.options.expand?.length) rows += reach * expandedRows(from, item.options.expand, expandTop);
  }
  return rows;
}

/**
 * The rows a GET may read: `keyed` for `/Route(<key>)` (one row), else a page of `$top` after
 * `$skip`. A `/$count` reads no rows out (its time is bounded by the batch's read time instead).
 */
export function readRowsOf(entity: EntityDefinition, options: ReadOptions, shape: 'page' | 'keyed' | 'count'): number {
  if (shape === 'count') return 1;
  const rows = shape === 'keyed' ? 1 : options.top + options.skip;
  return rows * (1 + expandedRows(entity, options.expand, options.expandTop));
}
