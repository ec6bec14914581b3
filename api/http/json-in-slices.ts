import { JSONParser } from '@streamparser/json';

/**
 * JSON of many megabytes (a `$batch` body, a batch's recorded results) read without holding the
 * event loop: JSON.parse of 16 MiB is one call of 30-110 ms on a busy 2-core machine (the hostile
 * fuzz of bench/README.md saw them as the longest turns). A streaming parser (@streamparser/json)
 * takes it 64 Ki units at a time and `pause` gives other callers a turn between slices. It accepts
 * and builds exactly what JSON.parse does (a property in test/unit/sliced-work.test.ts), costs about
 * three times its CPU, and takes a `__proto__` member as data, as JSON.parse does.
 */

const SLICE = 64 * 1024;

/** The JSON value of `text` (UTF-8 bytes or a string), parsed a slice at a time; throws on invalid JSON. */
export async function parseJsonInSlices(text: Uint8Array | string, pause: () => Promise<void>): Promise<unknown> {
  // What body-parser's json answers for an empty body.
  if (text.length === 0) return {};
  const parser = new JSONParser({ paths: ['$'], keepStack: false });
  let root: { value: unknown } | undefined;
  parser.onValue = ({ value, stack }) => {
    if (stack.length === 0) root = { value };
  };
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + SLICE);
    // A string is cut between code units: never between the halves of a surrogate pair.
    if (typeof text === 'string' && end < text.length) {
      const last = text.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff) end += 1;
    }
    parser.write(text.slice(at, end));
    at = end;
    await pause();
  }
  // A number at the root ends only with the input.
  if (!parser.isEnded) parser.end();
  if (!root) throw new SyntaxError('no JSON value');
  return root.value;
}
