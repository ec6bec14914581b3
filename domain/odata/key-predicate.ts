/**
 * OData key predicates in a path segment (DESIGN §17): `Schemes('h1am3Q')`, `Schemes(Id='h1am3Q')`
 * and a bare integer `Schemes(42)` (a DbId where the set takes one) name the same key as the
 * key-as-segment form `Schemes/h1am3Q`. A quote inside a string key is written twice.
 */

const SEGMENT = /^([A-Za-z_][A-Za-z0-9_]*)\((.*)\)$/s;
const STRING_KEY = /^'((?:[^']|'')*)'$/s;

/** The predicate naming a string key, `('k')`: the inverse of keyOfPredicate (a quote written twice). */
export function keyPredicateOf(key: string): string {
  return `('${key.replace(/'/g, "''")}')`;
}

/** The key a predicate's inside names (`'k'`, `Id='k'`, `42`), or null when it is none of these. */
export function keyOfPredicate(inside: string): string | null {
  const value = inside.startsWith('Id=') ? inside.slice(3) : inside;
  const quoted = STRING_KEY.exec(value);
  if (quoted) return quoted[1]!.replace(/''/g, "'");
  return /^[0-9]+$/.test(value) ? value : null;
}

/**
 * A decoded segment `Name(<key>)` as the two segments `Name`, `<key>`; any other segment as it is
 * (a malformed predicate then matches no route: a 404). A key such as `'$count'` stays whole too:
 * as a segment it would name `/$count`, and no key begins with `$`.
 */
export function splitKeyPredicate(segment: string): string[] {
  const match = SEGMENT.exec(segment);
  if (!match) return [segment];
  const key = keyOfPredicate(match[2]!);
  return key === null || key === '' || key.startsWith('$') ? [segment] : [match[1]!, key];
}
