/** The ETag rule lives in domain so the command worker checks `If-Match` by the same rule. */
export { etagOf, ifMatchAccepts } from '../../domain/writes/entity-version';
