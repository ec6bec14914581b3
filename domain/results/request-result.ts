import type { CommandName } from '../commands/command';
import type { Failure } from '../errors/domain-error';

/**
 * What a request comes to, as data (issue 25 item 4): a read's page, count or entity, a write's
 * outcome, or a failure. `db/` and the workers produce these; only the API turns them into
 * statuses, headers and bodies (`api/http/answer.ts`), for a lone request and for each request of
 * a `$batch` alike, which is what makes a request in a batch answer exactly what it answers alone.
 */

/**
 * A `$count`: exact, or — when a filtered or searched count reached COUNT_LIMIT and stopped there —
 * the limit as a lower bound (`limited`).
 */
export interface Count {
  n: number;
  limited: boolean;
}

/** A GET's outcome (db/query/read-operation.ts). */
export type ReadResult =
  /** A collection page: its JSON array (built in Postgres), the `$count` asked for, the next page's address. */
  | { kind: 'page'; json: string; total?: Count; next?: string }
  /** `/$count`. */
  | ({ kind: 'count' } & Count)
  /** A keyed read: the entity's JSON and its entity tag (domain/writes/entity-version.ts). */
  | { kind: 'entity'; json: string; tag: string }
  /** A keyed read whose `If-None-Match` names the current tag: the client's copy is current. */
  | { kind: 'unchanged'; tag: string }
  /** Under `/odata`: a single-valued navigation property that is null (db/query/odata-read.ts, 204). */
  | { kind: 'empty' };

/** What a write did to its entity. */
export type WriteChange = 'created' | 'updated' | 'deleted';

/** What a successful write reports (commands/command.ts): the entity written and its version. */
export interface WrittenEntity {
  entity: string;
  encodedId: string;
  version: number;
}

/** A successful write, with the entity as a keyed read shows it when a representation was given. */
export interface WrittenResult extends WrittenEntity {
  kind: 'written';
  change: WriteChange;
  /** Present only when a representation was asked for and could be read within the budget. */
  representation?: { json: string; version: number };
}

export interface FailedResult {
  kind: 'failed';
  failure: Failure;
}

export type RequestResult = ReadResult | WrittenResult | FailedResult;

const CHANGE_OF: Record<CommandName, WriteChange> = {
  create: 'created',
  replace: 'updated',
  patch: 'updated',
  delete: 'deleted',
};

/**
 * A successful write's result (spec §4.2). `representation` is the entity re-read as a keyed GET
 * shows it, or null when none was asked for or it could not be given (the row gone meanwhile, or
 * past a `$batch`'s response budget): the write stands either way.
 */
export function writtenResult(
  name: CommandName,
  written: WrittenEntity,
  representation: { json: string; version: number } | null,
): WrittenResult {
  const change = CHANGE_OF[name];
  const result: WrittenResult = {
    kind: 'written',
    change,
    entity: written.entity,
    encodedId: written.encodedId,
    version: written.version,
  };
  if (representation && change !== 'deleted') {
    result.representation = { json: representation.json, version: representation.version };
  }
  return result;
}

export function failedResult(failure: Failure): FailedResult {
  return { kind: 'failed', failure };
}

/**
 * What a failure's problem body may add to its messages (type, title, status and the JSON around
 * them): the API's problem bodies stay within it (test/unit/result-size.test.ts holds them to it).
 */
export const PROBLEM_ENVELOPE_MAX_BYTES = 160;

/**
 * The bytes of the body a result is answered with: exact for reads and writes (their text is the
 * body), an upper bound for a failure (its messages appear at most twice: `detail` and
 * `extensions.errors`). A `$batch` spends its MAX_RESPONSE_BYTES with this before it keeps a result,
 * so the response it is rendered into never holds more than the limit.
 */
export function bodyBytesOf(result: RequestResult): number {
  switch (result.kind) {
    case 'page':
    case 'entity':
      return Buffer.byteLength(result.json);
    case 'count':
      return String(result.n).length;
    case 'unchanged':
    case 'empty':
      return 0;
    case 'written':
      return result.representation && result.change !== 'deleted' ? Buffer.byteLength(result.representation.json) : 0;
    case 'failed':
      return PROBLEM_ENVELOPE_MAX_BYTES + 2 * Buffer.byteLength(JSON.stringify(result.failure.errors));
  }
}
