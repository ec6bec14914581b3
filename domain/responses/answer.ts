import { entityByName } from '../entities';
import type { Failure } from '../errors/domain-error';
import { problemFor } from '../errors/problem';
import { bearerChallenge } from '../auth/bearer-challenge';
import { etagOf } from '../writes/entity-version';

/**
 * A response as data: what one request answers. The API writes it to the socket
 * (api/http/send-answer.ts); a `$batch` embeds it among the others (DESIGN §12). Building both from
 * the same functions is what makes a request in a batch answer exactly what it answers alone.
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

/** Spec §4.2: `Prefer: return=representation`, the whole value compared case-insensitively; anything else means minimal. */
export function prefersRepresentation(prefer: string | undefined): boolean {
  return prefer?.trim().toLowerCase() === 'return=representation';
}

export type WriteMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a successful write reports: the entity written and its version (commands/command.ts). */
export interface WrittenResult {
  entity: string;
  encodedId: string;
  version: number;
}

/**
 * A successful write (spec §4.2): POST 201 + Location, PATCH/PUT 200 or 204, DELETE 204; the ETag
 * of the written version; the entity as a keyed GET shows it only when a representation was asked
 * for (`representation` is then that read, null if the row is gone meanwhile).
 */
export function writeAnswer(
  method: WriteMethod,
  result: WrittenResult,
  representation: { json: string; version: number } | null,
): Answer {
  if (method === 'DELETE') return { status: 204, headers: {} };
  const created = method === 'POST';
  const headers: Record<string, string> = {};
  if (created) headers.location = entityLocation(result.entity, result.encodedId);
  headers.etag = etagOf(representation?.version ?? result.version);
  if (!representation) return { status: created ? 201 : 204, headers };
  headers['preference-applied'] = 'return=representation';
  headers['content-type'] = JSON_TYPE;
  return { status: created ? 201 : 200, headers, body: representation.json };
}

function isJson(answer: Answer): boolean {
  const type = answer.headers['content-type'];
  return type === JSON_TYPE || type === PROBLEM_TYPE;
}

/**
 * The `$batch` response body (OData 4.01 JSON batch): the answers in request order, bodies built as
 * text (JSON bodies are JSON already, built by Postgres; they are embedded, not parsed again).
 */
export function batchResponseText(entries: readonly { id: string; answer: Answer }[]): string {
  const parts = entries.map(({ id, answer }) => {
    const body =
      answer.body === undefined ? '' : `,"body":${isJson(answer) ? answer.body : JSON.stringify(answer.body)}`;
    return `{"id":${JSON.stringify(id)},"status":${answer.status},"headers":${JSON.stringify(answer.headers)}${body}}`;
  });
  return `{"responses":[${parts.join(',')}]}`;
}
