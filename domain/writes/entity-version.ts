/**
 * ETags are the row version (bumped by trigger on every update), quoted as RFC 9110 asks. The API
 * sends them; the command worker compares `If-Match` under the row lock, so both use this rule.
 */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/**
 * A read with `$expand` has the ETag `"<version>-<digest of every row in it>"`; a write concerns the
 * row alone, so its version part is what `If-Match` compares.
 */
const EXPANDED_ETAG = /^"(\d+)-[0-9a-f]{32}"$/;

/** Does an `If-Match` header value accept the current version? (`*` accepts any existing row.) */
export function ifMatchAccepts(header: string, version: number): boolean {
  const current = etagOf(version);
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .map((tag) => tag.replace(EXPANDED_ETAG, '"$1"'))
    .some((tag) => tag === '*' || tag === current);
}
