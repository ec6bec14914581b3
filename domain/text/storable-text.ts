/**
 * Text Postgres cannot hold (DESIGN §13): U+0000, and UTF-16 surrogates without their pair (which
 * would otherwise be replaced by U+FFFD on the way in, silently changing the value).
 */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this refuses
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** Why `text` cannot be stored, worded for a problem message; null when it can. */
export function unstorableTextReason(text: string): string | null {
  if (isStorableText(text)) return null;
  return text.includes('\u0000') ? 'must not contain U+0000 (NUL)' : 'must not contain an unpaired UTF-16 surrogate';
}

/** `text` with what cannot be stored replaced by U+FFFD: for messages that must be recorded whatever they quote. */
export function storableText(text: string): string {
  return isStorableText(text) ? text : text.replace(new RegExp(UNSTORABLE.source, 'g'), '\ufffd');
}
