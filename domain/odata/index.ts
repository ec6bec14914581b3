/**
 * Hand-written parsers for the OData query options the API accepts. Pure: they turn option text
 * into a typed AST or throw ODataSyntaxError (never anything else) naming the offending text and
 * its position; field names and literal types are checked later by the read plan (domain/queries).
 */
export * from './ast';
export { FILTER_FUNCTIONS, type FilterFunction } from './filter-functions';
export { ODataSyntaxError } from './odata-syntax-error';
export { parseFilter } from './filter-parser';
export { parseOrderBy } from './orderby-parser';
export { parseExpand } from './expand-parser';
export { parseSearch } from './search-parser';
export { parseSelect } from './select-parser';
