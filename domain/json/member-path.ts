/**
 * JSON Pointers (RFC 6901) as the member paths of problem messages (spec §7 rule 2): shared by
 * schema validation, JSON Patch and the storable-text walk.
 */

/** `/Companies/0/Percentage~1Share` → `.Companies[0].Percentage/Share`. */
export function memberPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) => (/^(0|[1-9][0-9]*)$/.test(seg) ? `[${seg}]` : `.${seg}`))
    .join('');
}
