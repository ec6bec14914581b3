/**
 * Entity tags are the row version (bumped by trigger on every update), quoted as RFC 9110 asks. The
 * API sends them as ETags; the command worker compares `If-Match` under the row lock and a read
 * compares `If-None-Match`, so all use these rules.
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

/**
 * The tag of a read: the row version alone (what `If-Match` on writes compares), or with
 * expansions the version plus a digest of the whole document, so a change to any expanded row
 * changes it (DESIGN §13).
 */
export function entityTagOf(row: { version: number; digest?: string }): string {
  return row.digest ? `"${row.version}-${row.digest}"` : etagOf(row.version);
}

/**
 * `If-None-Match` as RFC 9110 §13.1.2: `*` matches any current representation; otherwise a
 * comma-separated list of entity tags compared weakly (a `W/` prefix on either side is ignored).
 */
export function ifNoneMatchMatches(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = (one: string) => one.trim().replace(/^W\//, '');
  const current = opaque(tag);
  return (header.match(/(?:W\/)?"[^"]*"/g) ?? []).some((one) => opaque(one) === current);
}
