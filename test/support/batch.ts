import type { ExecutionContext } from 'ava';
import type { HttpResult, Stack } from './stack';
import type { ExampleBatchRequest } from '../../domain/batch/batch-example';

/** Helpers shared by the `POST /$batch` test files (test/integration/batch-*.test.ts, DESIGN §12). */

/** One request of a batch body as a client writes it (the JSON batch format, DESIGN §12). */
export type BatchRequest = ExampleBatchRequest;

export interface BatchResponse {
  id: string;
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

/** The headers a batch response carries for each request, when that request alone carries them. */
const ANSWER_HEADERS = [
  'location',
  'etag',
  'preference-applied',
  'content-type',
  'allow',
  'x-total-count',
  'x-total-count-limit-exceeded',
  'link',
] as const;

/** What a client sees of one answer: status, the headers above and the body. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

/** Only the media type: the batch body is JSON text whatever charset a lone answer names. */
const mediaType = (value: string) => value.split(';')[0]!.trim().toLowerCase();

/** A lone HTTP answer in the shape of a batch response (JSON body parsed, text as a string). */
export function answerOf(res: HttpResult): Answer {
  const headers: Record<string, string> = {};
  for (const name of ANSWER_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = name === 'content-type' ? mediaType(value) : value;
  }
  const answer: Answer = { status: res.status, headers };
  if (res.text !== '') answer.body = res.body === undefined ? res.text : res.body;
  return answer;
}

/** A batch response in the same shape (header names case-insensitive, content-type as media type). */
export function batchAnswerOf(r: BatchResponse): Answer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(r.headers ?? {})) {
    const lower = name.toLowerCase();
    if ((ANSWER_HEADERS as readonly string[]).includes(lower))
      headers[lower] = lower === 'content-type' ? mediaType(value) : value;
  }
  const answer: Answer = { status: r.status, headers };
  if (r.body !== undefined) answer.body = r.body;
  return answer;
}

/** POST /$batch with `{ requests }` (or any other JSON value as `raw`). */
export function sendBatch(
  stack: Stack,
  requests: BatchRequest[],
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return stack.request('POST', '/$batch', { body: { requests }, headers });
}

/**
 * Sends a batch that must be answered 200 with one response per request, in request order, and
 * returns the responses; throws (failing the test) on anything else.
 */
export async function batch(
  stack: Stack,
  requests: BatchRequest[],
  headers: Record<string, string> = {},
): Promise<BatchResponse[]> {
  const res = await sendBatch(stack, requests, headers);
  return responsesOf(res, requests);
}

/** The responses of a 200 batch answer, checked against the requests sent. */
export function responsesOf(res: HttpResult, requests: BatchRequest[]): BatchResponse[] {
  if (res.status !== 200) throw new Error(`POST /$batch answered ${res.status}: ${res.text.slice(0, 2000)}`);
  if (!/^application\/json/.test(res.headers.get('content-type') ?? ''))
    throw new Error(`POST /$batch answered ${res.headers.get('content-type')}`);
  const responses = (res.body as { responses?: BatchResponse[] }).responses;
  if (!Array.isArray(responses)) throw new Error(`no responses array: ${res.text.slice(0, 2000)}`);
  const ids = responses.map((r) => r.id);
  const sent = requests.map((r) => r.id);
  if (JSON.stringify(ids) !== JSON.stringify(sent))
    throw new Error(`responses ${JSON.stringify(ids)} are not the requests ${JSON.stringify(sent)} in order`);
  return responses;
}

export function byId(responses: BatchResponse[]): Record<string, BatchResponse> {
  return Object.fromEntries(responses.map((r) => [r.id, r]));
}

/** A header of a batch response, whatever case the service wrote its name in. */
export function headerOf(r: BatchResponse, name: string): string | undefined {
  const entry = Object.entries(r.headers ?? {}).find(([n]) => n.toLowerCase() === name);
  return entry?.[1];
}

/** The encoded Id at the end of a batch response's `location`. */
export function createdId(r: BatchResponse): string {
  const location = headerOf(r, 'location');
  if (r.status !== 201 || !location) throw new Error(`${r.id} did not create: ${JSON.stringify(r)}`);
  return location.slice(location.lastIndexOf('/') + 1);
}

/** The encoded Ids the named requests created, in the order named. */
export function createdIds<const T extends readonly string[]>(
  responses: Record<string, BatchResponse>,
  ids: T,
): { [K in keyof T]: string } {
  return ids.map((id) => {
    const r = responses[id];
    if (!r) throw new Error(`no response '${id}'`);
    return createdId(r);
  }) as { [K in keyof T]: string };
}

/** A problem response of a batch, exactly the DESIGN §10 shape (like assertProblem for lone answers). */
export function assertBatchProblem(
  t: ExecutionContext,
  r: BatchResponse | undefined,
  status: number,
  title: string,
  expected: { detail?: string; errors?: string[] } = {},
): void {
  if (!r) return void t.fail('no such response');
  const where = `${r.id}: ${JSON.stringify(r)}`;
  t.is(r.status, status, where);
  t.is(mediaType(headerOf(r, 'content-type') ?? ''), 'application/problem+json', where);
  const body: Record<string, unknown> = { type: 'about:blank', title, status };
  if (expected.detail !== undefined) body.detail = expected.detail;
  if (expected.errors !== undefined) body.extensions = { errors: expected.errors };
  t.deepEqual(r.body, body, where);
}

/** 424 Failed Dependency: a problem whose detail names the request that failed (when given). */
export function assertFailedDependency(t: ExecutionContext, r: BatchResponse | undefined, failedId?: string): void {
  if (!r) return void t.fail('no such response');
  const where = `${r.id}: ${JSON.stringify(r)}`;
  t.is(r.status, 424, where);
  t.is(mediaType(headerOf(r, 'content-type') ?? ''), 'application/problem+json', where);
  t.like(r.body as object, { type: 'about:blank', title: 'Failed Dependency', status: 424 }, where);
  if (failedId !== undefined) {
    const detail = (r.body as { detail?: unknown }).detail;
    t.is(typeof detail, 'string', where);
    t.true(String(detail).includes(failedId), `${r.id}'s detail names '${failedId}': ${String(detail)}`);
  }
}

/** The one 400 a malformed batch answers: Validation Failed with every problem listed. */
export function batchErrorsOf(t: ExecutionContext, res: HttpResult): string[] {
  t.is(res.status, 400, res.text);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8', res.text);
  t.like(res.body as object, { type: 'about:blank', title: 'Validation Failed', status: 400 }, res.text);
  const errors = (res.body as { extensions?: { errors?: unknown } }).extensions?.errors;
  t.true(Array.isArray(errors) && errors.length > 0 && errors.every((e) => typeof e === 'string'), res.text);
  return Array.isArray(errors) ? (errors as string[]) : [];
}

/** Rows of `table` matching `where` (tests of a file run concurrently: never count a whole table). */
export async function countRows(stack: Stack, table: string, where: Record<string, unknown>): Promise<number> {
  const row = (await stack.knex(table).where(where).count({ n: '*' }).first()) as { n: number | string };
  return Number(row.n);
}

/**
 * Sends a hostile `$batch` and, once it is in flight, another caller's `GET /Countries?$top=1`:
 * the other read must be answered within a generous bound (a read takes milliseconds; a request
 * that held the API's event loop made it wait seconds). Answers the batch's HTTP result.
 */
export async function otherCallerServedDuring(
  t: ExecutionContext,
  stack: Stack,
  requests: BatchRequest[],
): Promise<HttpResult> {
  const sent = Date.now();
  const hostile = stack.request('POST', '/$batch', { body: { requests } });
  await new Promise((resolve) => setImmediate(resolve));
  const other = await stack.get('/Countries?$top=1');
  const took = Date.now() - sent;
  t.is(other.status, 200);
  t.true(took < 5_000, `GET /Countries?$top=1 took ${took} ms while the batch ran`);
  return hostile;
}
