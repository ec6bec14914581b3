import { entityByName } from '../../domain/entities';
import type { Failure } from '../../domain/errors/domain-error';
import type { Count, ReadResult, RequestResult, WrittenResult } from '../../domain/results/request-result';
import { etagOf } from '../../domain/writes/entity-version';
import { bearerChallenge } from './bearer-challenge';
import { tokenOfLsn, CONSISTENCY_TOKEN_HEADER } from './consistency';
import { problemFor, STATUS_OF } from './problem-status';

/**
 * A response as data: what one request answers, rendered from its result (domain/results). The API
 * writes it to the socket (send-answer.ts); a `$batch` embeds it among the others (batch-answer.ts,
 * DESIGN §12). Rendering both with these functions is what makes a request in a batch answer
 * exactly what it answers alone.
 */
export interface Answer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** Body text: JSON when the content type is a JSON one, plain text otherwise; none for 204/304. */
  body?: string;
}

export const JSON_TYPE = 'application/json';
export const PROBLEM_TYPE = 'application/problem+json';

export function entityLocation(entityName: string, encodedId: string): string {
  return `/${entityByName(entityName).route}/${encodedId}`;
}

/** The spec §7 problem of a failure, with the headers its kind carries (a 401's challenge included). */
export function failureAnswer(failure: Failure): Answer {
  const body = problemFor(failure.kind, failure.errors);
  const headers: Record<string, string> = { 'content-type': PROBLEM_TYPE };
  if (failure.retryAfter !== undefined) headers['retry-after'] = String(failure.retryAfter);
  if (failure.allow !== undefined) headers.allow = failure.allow.join(', ');
  if (failure.outcomeAt !== undefined) headers.location = failure.outcomeAt;
  if (failure.kind === 'Unauthorized')
    headers['www-authenticate'] = bearerChallenge(failure.tokenError, failure.errors[0]);
  return { status: body.status, headers, body: JSON.stringify(body) };
}

/** One message of an OData error: its `target` is the member a per-field message names (`Scheme.SchemeName: …`). */
function odataDetail(code: string, message: string): { code: string; message: string; target?: string } {
  const named = /^([A-Za-z]\w*)[.[/]([^\s:]*): /.exec(message);
  return named ? { code, message, target: named[2] } : { code, message };
}

/**
 * The OData JSON error of a failure (DESIGN §17): `{"error": {"code", "message", "target"?,
 * "details"}}`, with the status and headers the problem body of the same failure has; the
 * per-field messages (a problem's `extensions.errors`) are the details.
 */
export function odataFailureAnswer(failure: Failure): Answer {
  const answer = failureAnswer(failure);
  const problem = problemFor(failure.kind, failure.errors);
  const details = problem.extensions?.errors.map((message) => odataDetail(failure.kind, message)) ?? [];
  const message = problem.detail ?? (details.length === 1 ? details[0]!.message : STATUS_OF[failure.kind].title);
  const target = details.length === 1 ? details[0]!.target : undefined;
  const error = { code: failure.kind, message, ...(target ? { target } : {}), details };
  answer.headers['content-type'] = JSON_TYPE;
  return { ...answer, body: JSON.stringify({ error }) };
}

/** Spec §4.2: `Prefer: return=representation`, the whole value compared case-insensitively; anything else means minimal. */
export function prefersRepresentation(prefer: string | undefined): boolean {
  return prefer?.trim().toLowerCase() === 'return=representation';
}

/** Said when a count stopped at its limit (COUNT_LIMIT, SEARCH_COUNT_LIMIT): the number sent is a lower bound. */
const COUNT_LIMIT_HEADER = 'x-total-count-limit-exceeded';

/** The header a count that stopped at its limit carries (at the root and under /odata, alone and in a batch). */
export function limitHeader(count: Count): Record<string, string> {
  return count.limited ? { [COUNT_LIMIT_HEADER]: 'true' } : {};
}

function countHeaders(count: Count): Record<string, string> {
  return { 'x-total-count': String(count.n), ...limitHeader(count) };
}

/**
 * A read (spec §4, §4.1): a page with `X-Total-Count` when `$count` was asked for and
 * `Link: <…>; rel="next"` when there is a next page; `/$count` as plain text; an entity with its
 * ETag, or 304 when `If-None-Match` named it.
 */
export function readAnswer(result: ReadResult): Answer {
  switch (result.kind) {
    case 'page': {
      const headers: Record<string, string> = { 'content-type': JSON_TYPE };
      if (result.total !== undefined) Object.assign(headers, countHeaders(result.total));
      if (result.next !== undefined) headers.link = `<${result.next}>; rel="next"`;
      return { status: 200, headers, body: result.json };
    }
    case 'count':
      return { status: 200, headers: { 'content-type': 'text/plain', ...limitHeader(result) }, body: String(result.n) };
    case 'entity':
      return { status: 200, headers: { etag: result.tag, 'content-type': JSON_TYPE }, body: result.json };
    case 'unchanged':
      return { status: 304, headers: { etag: result.tag } };
    case 'empty':
      return { status: 204, headers: {} };
  }
}

/**
 * A successful write (spec §4.2): POST 201 + Location, PATCH/PUT 200 or 204, DELETE 204; the ETag
 * of the written version; the entity as a keyed GET shows it only when a representation was given.
 * `walPosition`: where the primary's WAL was after the write committed, sent as X-Consistency-Token
 * (DESIGN §14) when the API reads from replicas.
 */
export function writtenAnswer(result: WrittenResult, walPosition?: string): Answer {
  const answer = entityWrittenAnswer(result);
  if (walPosition !== undefined) answer.headers[CONSISTENCY_TOKEN_HEADER] = tokenOfLsn(walPosition);
  return answer;
}

function entityWrittenAnswer(result: WrittenResult): Answer {
  if (result.change === 'deleted') return { status: 204, headers: {} };
  const created = result.change === 'created';
  const headers: Record<string, string> = {};
  if (created) headers.location = entityLocation(result.entity, result.encodedId);
  const { representation } = result;
  headers.etag = etagOf(representation?.version ?? result.version);
  if (!representation) return { status: created ? 201 : 204, headers };
  headers['preference-applied'] = 'return=representation';
  headers['content-type'] = JSON_TYPE;
  return { status: created ? 201 : 200, headers, body: representation.json };
}

/** Any request's answer; `walPosition` as for writtenAnswer (a write's success only). */
export function answerOf(result: RequestResult, walPosition?: string): Answer {
  switch (result.kind) {
    case 'failed':
      return failureAnswer(result.failure);
    case 'written':
      return writtenAnswer(result, walPosition);
    default:
      return readAnswer(result);
  }
}
