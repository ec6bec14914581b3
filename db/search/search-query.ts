import type { EntityDefinition } from '../../domain/entities';
import type { SearchNode } from '../../domain/odata';
import { badRequest } from '../../domain/errors/domain-error';
import type { ExtraCondition } from '../query/entity-reader';
import { ALL_FIELDS, TEXT_SEARCH_CONFIG } from './search-indexer';

/**
 * `$search` (DESIGN §5) compiled against the search read model: each term is a key set served by
 * the GIN index (`document @@ query`) restricted to its fields; AND/OR/NOT combine those sets.
 * Words match as prefixes (`tow` finds "Tower"); a quoted phrase matches its words in order. With
 * no `$orderby`, rows come by relevance (summed rank over the matching fields), then key.
 */

type Term = Extract<SearchNode, { kind: 'term' }>;

const WORD = /[\p{L}\p{N}]+/gu;

function tsQuery(term: Term, params: unknown[]): string {
  const words = term.text.match(WORD) ?? [];
  if (words.length === 0) throw badRequest(`$search: '${term.text}' has no letters or digits to search for`);
  if (term.phrase) {
    params.push(words.join(' '));
    return `phraseto_tsquery('${TEXT_SEARCH_CONFIG}', ?)`;
  }
  // Only letters and digits reach to_tsquery, so its operators cannot be injected.
  params.push(words.map((w) => `${w}:*`).join(' & '));
  return `to_tsquery('${TEXT_SEARCH_CONFIG}', ?)`;
}

export function searchCondition(entity: EntityDefinition, search: SearchNode, searchFields?: string[]): ExtraCondition {
  const allFields = Object.keys(entity.searchFields);
  if (allFields.length === 0) throw badRequest(`$search is not offered on /${entity.route}`);
  const known = (field: string) => {
    if (!allFields.includes(field)) {
      throw badRequest(`unknown search field '${field}' of ${entity.name}; searchable: ${allFields.join(', ')}`);
    }
    return field;
  };
  const chosen = searchFields?.length ? searchFields.map(known) : undefined;
  if (!chosen && !hasFieldTerm(search)) return wholeDocumentSearch(entity, search);

  const defaultFields = chosen ?? allFields;
  const params: unknown[] = [];
  const positives: Term[] = [];
  const compile = (node: SearchNode, negated: boolean): string => {
    switch (node.kind) {
      case 'and':
        return `(${node.items.map((n) => compile(n, negated)).join(' and ')})`;
      case 'or':
        return `(${node.items.map((n) => compile(n, negated)).join(' or ')})`;
      case 'not':
        return `not ${compile(node.operand, !negated)}`;
      case 'term': {
        const fields = node.field ? [known(node.field)] : defaultFields;
        if (!negated) positives.push(node);
        params.push(entity.name, fields);
        const q = tsQuery(node, params);
        return `r.id in (select s.entity_key from search_fields s where s.entity_type = ? and s.field = any(?::text[]) and s.document @@ ${q})`;
      }
    }
  };
  const sql = compile(search, false);

  // Relevance: rank of every positive term summed over the row's matching fields.
  const orderParams: unknown[] = [];
  const ranks = positives.map((term) => {
    const q = tsQuery(term, orderParams);
    orderParams.push(entity.name);
    return `coalesce((select sum(ts_rank(s.document, ${q})) from search_fields s where s.entity_key = r.id and s.entity_type = ?), 0)`;
  });
  return {
    sql,
    params,
    defaultOrder: ranks.length ? { sql: `(${ranks.join(' + ')}) desc`, params: orderParams } : undefined,
  };
}

function hasFieldTerm(node: SearchNode): boolean {
  switch (node.kind) {
    case 'term':
      return node.field !== null;
    case 'not':
      return hasFieldTerm(node.operand);
    default:
      return node.items.some(hasFieldTerm);
  }
}

/**
 * The common case — no field named anywhere — as one tsquery over the all-fields document: one GIN
 * probe whatever the number of terms, ranked with field weights (names first).
 */
function wholeDocumentSearch(entity: EntityDefinition, search: SearchNode): ExtraCondition {
  const build = (node: SearchNode, params: unknown[]): string => {
    switch (node.kind) {
      case 'term':
        return tsQuery(node, params);
      case 'not':
        return `(!! ${build(node.operand, params)})`;
      case 'and':
        return `(${node.items.map((n) => build(n, params)).join(' && ')})`;
      case 'or':
        return `(${node.items.map((n) => build(n, params)).join(' || ')})`;
    }
  };
  const params: unknown[] = [entity.name];
  const sql = `r.id in (select s.entity_key from search_fields s where s.entity_type = ? and s.field = '${ALL_FIELDS}' and s.document @@ ${build(search, params)})`;
  const orderParams: unknown[] = [];
  const q = build(search, orderParams);
  orderParams.push(entity.name);
  return {
    sql,
    params,
    defaultOrder: {
      sql: `coalesce((select ts_rank(s.document, ${q}) from search_fields s where s.entity_key = r.id and s.entity_type = ? and s.field = '${ALL_FIELDS}'), 0) desc`,
      params: orderParams,
    },
  };
}

/** The `$search` condition of a read, if it has one (reads and exports share it). */
export function searchExtra(
  entity: EntityDefinition,
  options: { search?: SearchNode; searchFields?: string[] },
): ExtraCondition | undefined {
  if (!options.search) {
    if (options.searchFields?.length) throw badRequest('searchFields needs a $search');
    return undefined;
  }
  return searchCondition(entity, options.search, options.searchFields);
}
