/**
 * ETags are the row version (bumped by trigger on every update), quoted as RFC 9110 asks. The API
 * sends them; the command worker compares `If-Match` under the row lock, so both use this rule.
 */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** Does an `If-Match` header value accept the current version? (`*` accepts any existing row.) */
export function ifMatchAccepts(header: string, version: number): boolean {
  const current = etagOf(version);
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === current);
}
