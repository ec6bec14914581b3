import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Command } from './command';

/**
 * Commands in the queue carry an HMAC-SHA256 over their content with COMMAND_SIGNING_KEY
 * (DESIGN §13): the API signs what it enqueues, a worker applies only what verifies, so a job
 * written to Redis by other means (a board, a script, anyone with Redis access but not the key)
 * cannot act as a caller.
 */

/** Anything a producer signs: a command, a batch (domain/batch/batch-command.ts). */
type Signable = Pick<Command, 'commandId' | 'subject'>;

export type Signed<T extends Signable> = T & { signature: string };

export type SignedCommand = Signed<Command>;

/**
 * The HMAC over the content's JSON text. BullMQ stores job data as that text and parses it back,
 * so members keep their order and the worker's text is the API's byte for byte; hashing it costs
 * one native JSON.stringify (a sorted re-serialization took ~20 ms per 1,000-request batch).
 */
function digest(command: Signable, key: string): Buffer {
  const { signature: _ignored, ...content } = command as Partial<Signed<Signable>>;
  return createHmac('sha256', key).update(JSON.stringify(content)).digest();
}

export function signCommand<T extends Signable>(command: T, key: string): Signed<T> {
  return { ...command, signature: digest(command, key).toString('base64url') };
}

/**
 * JSON.stringify(value)'s text, in pieces: each member of the object, and each element of an array
 * member on its own. For plain JSON data (what a command is) the pieces joined are the text byte for
 * byte: members whose value JSON omits (undefined, functions) are left out, array holes are `null`.
 */
export function* jsonTextPieces(value: object): Generator<string> {
  let first = true;
  yield '{';
  for (const [name, member] of Object.entries(value)) {
    const text = Array.isArray(member) ? undefined : (JSON.stringify(member) as string | undefined);
    if (!Array.isArray(member) && text === undefined) continue;
    yield `${first ? '' : ','}${JSON.stringify(name)}:`;
    first = false;
    if (text !== undefined) {
      yield text;
      continue;
    }
    yield '[';
    for (let i = 0; i < member.length; i++) {
      yield `${i === 0 ? '' : ','}${(JSON.stringify(member[i]) as string | undefined) ?? 'null'}`;
    }
    yield ']';
  }
  yield '}';
}

/**
 * signCommand for a command of many megabytes (a `$batch` of up to 16 MiB): the same signature,
 * its text serialised and hashed a step at a time, `pause` called between steps so that the
 * caller can give the event loop to others (one JSON.stringify and HMAC of 16 MiB is ~60 ms).
 */
export async function signCommandInSlices<T extends Signable>(
  command: T,
  key: string,
  pause: () => Promise<void>,
): Promise<Signed<T>> {
  const { signature: _ignored, ...content } = command as Partial<Signed<Signable>>;
  const hmac = createHmac('sha256', key);
  for (const piece of jsonTextPieces(content)) {
    hmac.update(piece);
    await pause();
  }
  return { ...command, signature: hmac.digest().toString('base64url') };
}

/** True only when `data` carries a signature made with `key` over exactly this content. */
export function verifyCommand(data: unknown, key: string): data is Signed<Signable> {
  if (data === null || typeof data !== 'object') return false;
  const given = (data as { signature?: unknown }).signature;
  if (typeof given !== 'string') return false;
  const expected = digest(data as Signable, key);
  const actual = Buffer.from(given, 'base64url');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
