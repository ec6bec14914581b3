import type { EntityDefinition } from '../../domain/entities';
import type { SearchNode } from '../../domain/odata';
import { badRequest } from '../../domain/errors/domain-error';

/** The text-search configuration of every document and query (the search read model's too). */
export const TEXT_SEARCH_CONFIG = 'simple';

/**
 * The table of whole-entity documents (every searchable field of a row together, weighted), for
 * searches naming no field: one GIN probe, over one entity type's partial index.
 */
export const WHOLE_DOCUMENTS = 'search_documents';

/** SQL with knex `?` placeholders and their values. */
interface Fragment {
  sql: string;
  params: unknown[];
}

/** What other read features (here `$search`) add to the root rows `r`: a condition or a join. */
export interface ExtraCondition {
  where?: Fragment;
  /** A join that keeps only the matching rows, one row each. */
  join?: Fragment;
  /** An ORDER BY prefix used when the client gave no `$orderby` (e.g. relevance). */
  defaultOrder?: { sql: string; params: unknown[] };
  /**
   * Relevance over a bounded window, for list pages without `$orderby`: the first `size` rows the
   * read selects in key order (`w.id`) are ranked by `rank` and come first, the rows after them
   * follow in key order. A page then costs the window, not every match. `candidates` selects the
   * key (its one column) of every matching document, one row each, for the window to be found from
   * the first of them in key order rather than by walking the rows the read selects.
   */
  rankWindow?: { size: number; rank: Fragment; candidates: Fragment };
}

/**
 * How many matches of a `$search` without `$orderby` are ranked (issue 27): the first ones in key
 * order. Ranking every match cost 1.3 s for a word in most rows at 100k schemes and grew with the
 * table; a window ranks a bounded set whatever the word.
 */
export const SEARCH_RANK_WINDOW = 1000;

/**
 * `$search` (DESIGN §5) compiled against the search read model: each term is a key set served by
 * the GIN index (`document @@ query`) restricted to its fields; AND/OR/NOT combine those sets.
 * Words of 2+ characters match as prefixes (`tow` finds "Tower"), one-character words as whole
 * words; a quoted phrase matches its words in order. With
 * no `$orderby`, rows come by relevance (summed rank over the matching fields), then key; a search
 * naming no field ranks the first SEARCH_RANK_WINDOW matches of a page's read (`rankWindow`).
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

export function searchCondition(
  entity: EntityDefinition,
  search: SearchNode,
  searchFields?: string[],
  windowSize = SEARCH_RANK_WINDOW,
): ExtraCondition {
  const allFields = Object.keys(entity.searchFields);
  if (allFields.length === 0) throw badRequest(`$search is not offered on /${entity.route}`);
  const known = (field: string) => {
    if (!allFields.includes(field)) {
      throw badRequest(`unknown search field '${field}' of ${entity.name}; searchable: ${allFields.join(', ')}`);
    }
    return field;
  };
  const chosen = searchFields?.length ? searchFields.map(known) : undefined;
  if (!chosen && !hasFieldTerm(search)) return wholeDocumentSearch(entity, search, windowSize);

  const defaultFields = chosen ?? allFields;
  const fieldsOf = (term: Term) => (term.field ? [known(term.field)] : defaultFields);
  return needsPositiveMatch(search)
    ? groupedFieldSearch(entity, search, fieldsOf)
    : perTermFieldSearch(entity, search, fieldsOf);
}

/** Terms outside any negation: a row must match one of them when `needsPositiveMatch`. */
function positiveTerms(node: SearchNode, negated = false): Term[] {
  switch (node.kind) {
    case 'term':
      return negated ? [] : [node];
    case 'not':
      return positiveTerms(node.operand, !negated);
    default:
      return node.items.flatMap((item) => positiveTerms(item, negated));
  }
}

/** Can a row match without any positive term matching? (`-a` or `a OR -b` can; `a -b` cannot.) */
function needsPositiveMatch(node: SearchNode): boolean {
  switch (node.kind) {
    case 'term':
      return true;
    case 'not':
      return false;
    case 'and':
      return node.items.some(needsPositiveMatch);
    case 'or':
      return node.items.every(needsPositiveMatch);
  }
}

/**
 * Field-restricted search as one grouped scan: the candidates are the rows one GIN probe finds for
 * the OR of every positive term (20 OR'ed field terms cost one index scan, not 20); each
 * candidate's field documents are then grouped once and the AND/OR/NOT tree is decided over them
 * with one `bool_or` per term. Relevance is the rank of that OR over the matching fields.
 */
function groupedFieldSearch(
  entity: EntityDefinition,
  search: SearchNode,
  fieldsOf: (term: Term) => string[],
): ExtraCondition {
  const positives = positiveTerms(search);
  const positiveQuery = positives.map(termQueryText).join(' | ');
  const positiveFields = [...new Set(positives.flatMap(fieldsOf))];
  const usedFields = new Set<string>();
  const havingParams: unknown[] = [];
  const having = (node: SearchNode): string => {
    switch (node.kind) {
      case 'term': {
        const fields = fieldsOf(node);
        fields.forEach((field) => usedFields.add(field));
        havingParams.push(fields, termQueryText(node));
        return `bool_or(s.field = any(?::text[]) and s.document @@ to_tsquery('${TEXT_SEARCH_CONFIG}', ?))`;
      }
      case 'not':
        return `not ${having(node.operand)}`;
      case 'and':
        return `(${node.items.map(having).join(' and ')})`;
      case 'or':
        return `(${node.items.map(having).join(' or ')})`;
    }
  };
  const condition = having(search);
  const candidates = `select p.entity_key from search_fields p where p.entity_type = ? and p.field = any(?::text[]) and p.document @@ to_tsquery('${TEXT_SEARCH_CONFIG}', ?)`;
  return {
    where: {
      sql: `r.id in (select s.entity_key from search_fields s where s.entity_type = ? and s.field = any(?::text[]) and s.entity_key in (${candidates}) group by s.entity_key having ${condition})`,
      params: [entity.name, [...usedFields], entity.name, positiveFields, positiveQuery, ...havingParams],
    },
    defaultOrder: {
      sql: `coalesce((select sum(ts_rank(s.document, to_tsquery('${TEXT_SEARCH_CONFIG}', ?))) from search_fields s where s.entity_key = r.id and s.entity_type = ? and s.field = any(?::text[])), 0) desc`,
      params: [positiveQuery, entity.name, positiveFields],
    },
  };
}

/**
 * A tree that can match with no positive term (`-Name:x`): one key set per term, so rows without
 * any search document still count as not matching a negated term.
 */
function perTermFieldSearch(
  entity: EntityDefinition,
  search: SearchNode,
  fieldsOf: (term: Term) => string[],
): ExtraCondition {
  const params: unknown[] = [];
  const compile = (node: SearchNode): string => {
    switch (node.kind) {
      case 'and':
        return `(${node.items.map(compile).join(' and ')})`;
      case 'or':
        return `(${node.items.map(compile).join(' or ')})`;
      case 'not':
        return `not ${compile(node.operand)}`;
      case 'term': {
        params.push(entity.name, fieldsOf(node));
        const q = tsQuery(node, params);
        return `r.id in (select s.entity_key from search_fields s where s.entity_type = ? and s.field = any(?::text[]) and s.document @@ ${q})`;
      }
    }
  };
  const sql = compile(search);
  const positives = positiveTerms(search);
  if (positives.length === 0) return { where: { sql, params } };
  const orderParams = [positives.map(termQueryText).join(' | '), entity.name];
  return {
    where: { sql, params },
    defaultOrder: {
      sql: `coalesce((select sum(ts_rank(s.document, to_tsquery('${TEXT_SEARCH_CONFIG}', ?))) from search_fields s where s.entity_key = r.id and s.entity_type = ?), 0) desc`,
      params: orderParams,
    },
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
 * The common case — no field named anywhere — as one tsquery over the whole-entity document: one
 * parameter, one GIN probe whatever the number of terms (20 OR'ed words cost one index scan, not
 * 20), ranked with field weights (names first). The join carries each match's document: a count
 * never reads it, exports (which read every row anyway) rank every row from it in the same pass
 * (a correlated lookup per row to rank cost 1.2 of 2.2 s for 97k matches), and list pages rank
 * only the window of `rankWindow`, by a lookup of each of its rows. There is one whole document
 * per key, so the join adds no rows. The entity type is written into the text (a definition's
 * name, never a client's) so the planner matches it to that type's partial index.
 */
function wholeDocumentSearch(entity: EntityDefinition, search: SearchNode, windowSize: number): ExtraCondition {
  const text = queryText(search);
  const type = `'${entity.name.replace(/'/g, "''")}'`;
  const query = `to_tsquery('${TEXT_SEARCH_CONFIG}', ?)`;
  return {
    join: {
      sql: `join (select s.entity_key, s.document, q.q from ${WHOLE_DOCUMENTS} s, ${query} q(q) where s.entity_type = ${type} and s.document @@ q.q) rs on rs.entity_key = r.id`,
      params: [text],
    },
    defaultOrder: { sql: 'ts_rank(rs.document, rs.q) desc', params: [] },
    rankWindow: {
      size: windowSize,
      rank: {
        sql: `(select ts_rank(d.document, ${query}) from ${WHOLE_DOCUMENTS} d where d.entity_type = ${type} and d.entity_key = w.id)`,
        params: [text],
      },
      candidates: {
        sql: `select c.entity_key from ${WHOLE_DOCUMENTS} c where c.entity_type = ${type} and c.document @@ ${query}`,
        params: [text],
      },
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
