import type { EntityDefinition } from '../../domain/entities';
import type { SearchNode } from '../../domain/odata';
import { badRequest } from '../../domain/errors/domain-error';
import type { ExtraCondition } from '../query/entity-reader';
import { ALL_FIELDS, TEXT_SEARCH_CONFIG } from './search-indexer';

/**
 * `$search` (DESIGN §5) compiled against the search read model: each term is a key set served by
 * the GIN index (`document @@ query`) restricted to its fields; AND/OR/NOT combine those sets.
 * Words of 2+ characters match as prefixes (`tow` finds "Tower"), one-character words as whole
 * words; a quoted phrase matches its words in order. With
 * no `$orderby`, rows come by relevance (summed rank over the matching fields), then key.
 */

type Term = Extract<SearchNode, { kind: 'term' }>;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A word as a tsquery operand (DESIGN §13): two or more characters match as a prefix, one only as
 * a whole word (a one-letter prefix would match most of the index).
 */
function wordQuery(word: string): string {
  return [...word].length >= 2 ? `${word}:*` : word;
}

/**
 * The tsquery text of one term. Only letters and digits reach it, so tsquery operators cannot be
 * injected; the whole search becomes one `to_tsquery` of such pieces.
 */
function termQueryText(term: Term): string {
  const words = term.text.match(WORD) ?? [];
  if (words.length === 0) throw badRequest(`$search: '${term.text}' has no letters or digits to search for`);
  if (term.phrase) return `(${words.join(' <-> ')})`;
  return `(${words.map(wordQuery).join(' & ')})`;
}

function tsQuery(term: Term, params: unknown[]): string {
  params.push(termQueryText(term));
  return `to_tsquery('${TEXT_SEARCH_CONFIG}', ?)`;
}

/** The tsquery text of a whole search tree (AND, OR, NOT of terms). */
function queryText(node: SearchNode): string {
  switch (node.kind) {
    case 'term':
      return termQueryText(node);
    case 'not':
      return `!${queryText(node.operand)}`;
    case 'and':
      return `(${node.items.map(queryText).join(' & ')})`;
    case 'or':
      return `(${node.items.map(queryText).join(' | ')})`;
  }
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
 * The common case — no field named anywhere — as one tsquery over the all-fields document: one
 * parameter, one GIN probe whatever the number of terms (20 OR'ed words cost one index scan, not
 * 20), ranked with field weights (names first).
 */
function wholeDocumentSearch(entity: EntityDefinition, search: SearchNode): ExtraCondition {
  const query = queryText(search);
  const tsquery = `to_tsquery('${TEXT_SEARCH_CONFIG}', ?)`;
  return {
    sql: `r.id in (select s.entity_key from search_fields s where s.entity_type = ? and s.field = '${ALL_FIELDS}' and s.document @@ ${tsquery})`,
    params: [entity.name, query],
    defaultOrder: {
      sql: `coalesce((select ts_rank(s.document, ${tsquery}) from search_fields s where s.entity_key = r.id and s.entity_type = ? and s.field = '${ALL_FIELDS}'), 0) desc`,
      params: [query, entity.name],
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
