import wkx from 'wkx';

/**
 * Geometry text (SchemeMarketBoundary.Geometry) must parse as WKT. wkx stops at the end of the
 * first geometry and ignores what follows, so the text must also end where the geometry does:
 * balanced parentheses closing at the very end (or `EMPTY`).
 */
export function isWkt(text: string): boolean {
  const trimmed = text.trim();
  if (!/(\)|\bEMPTY)$/i.test(trimmed)) return false;
  let depth = 0;
  for (const ch of trimmed) {
    if (ch === '(') depth += 1;
    else if (ch === ')' && --depth < 0) return false;
  }
  if (depth !== 0) return false;
  try {
    wkx.Geometry.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}
