import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { BatchEntry } from '../../domain/batch/batch-command';
import { referencedId } from '../../domain/batch/batch-references';
import { badRequest, tooLarge, unsupportedMediaType } from '../../domain/errors/domain-error';
import type { Answer } from '../http/answer';
import { parseJsonInSlices } from '../http/json-in-slices';
import { MAX_REQUEST_BODY_BYTES } from '../http/request-body-limit';
import { turnSlicer } from '../limits/turn-slicer';
import { batchBytesReader, batchJsonOf } from '../batch/batch-body';
import type { BatchFormat } from '../batch/batch.routes';
import {
  DEFAULT_MAX_HEADER_BYTES,
  parseMultipartBatch,
  renderMultipartBatch,
  type BatchPart,
  type HttpMessage,
} from '../batch/multipart-batch';
import { ODATA_ROOT } from '../routes/route-table';
import { odataBatchReadOf, odataBatchWriteOf } from './odata-batch-read';
import { odataStepAnswer } from './odata-batch-answer';
import { serviceRootOf } from './service-root';

/**
 * `POST /odata/$batch` (DESIGN §17): the JSON batch format of the root's `$batch` (§12) and OData
 * 4.0's `multipart/mixed`, both read into the JSON format's requests and run by the same batch
 * runner. A multipart changeset is an atomicity group, a part's `Content-ID` its request id (so
 * `$1` refers to it, in a URL or an `@odata.bind`). Answers are in the format of the request, each
 * response as the request alone answers under `/odata`; a changeset that failed answers with the
 * one response of the request that failed it (OData 4.0 Part 1 §11.7.4).
 */

/** How the requests were framed: the JSON format, or multipart parts (message indexes, a changeset's in a list). */
export type ODataBatchFraming =
  { kind: 'json' } | { kind: 'multipart'; parts: (number | number[])[]; ids: (string | undefined)[] };

export interface ODataBatchLimits {
  /** BATCH_MAX_BYTES. */
  maxBytes: number;
  /** BATCH_MAX_REQUESTS. */
  maxRequests: number;
  /** MAX_TOP: page sizes of the batch's reads. */
  maxTop: number;
}

const PARSE_SLICE_MS = 10;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * `"Address@odata.bind": "$1"` (a Content-ID reference, OData 4.0 §11.7.3.1) read as the nested
 * form `"Address": {"Id": "$1"}`, which the batch's references resolve (domain/batch/batch-references.ts).
 * Other binds are left to the write itself.
 */
function bindsAsReferences(body: unknown): unknown {
  if (!isRecord(body)) return body;
  let copy: Record<string, unknown> | undefined;
  for (const [member, value] of Object.entries(body)) {
    if (!member.endsWith('@odata.bind')) continue;
    const property = member.slice(0, -'@odata.bind'.length);
    const reference = (item: unknown) => (referencedId(item) === undefined ? undefined : { Id: item });
    const bound = Array.isArray(value)
      ? value.every((item) => reference(item))
        ? value.map(reference)
        : undefined
      : reference(value);
    if (bound === undefined || property === '' || Object.hasOwn(body, property)) continue;
    copy ??= { ...body };
    delete copy[member];
    copy[property] = bound;
  }
  return copy ?? body;
}

/** A header block as the JSON format's `headers` object (names in lower case; a repeated name keeps its last value). */
function headerObject(headers: readonly [string, string][]): Record<string, string> {
  return Object.fromEntries(headers.filter(([name]) => name.toLowerCase() !== 'content-id'));
}

/** A request's body: JSON when its type says so, none when empty; a 400 (413 past a request's limit) naming the part. */
function bodyOf(message: HttpMessage, index: number): unknown {
  if (message.body.length > MAX_REQUEST_BODY_BYTES) {
    throw tooLarge(
      `The body of batch request ${index + 1} exceeds ${MAX_REQUEST_BODY_BYTES / 1024 / 1024} MiB, the limit of one request's body.`,
    );
  }
  const text = message.body.toString('utf8');
  if (text.trim() === '') return undefined;
  const type = message.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? 'application/json';
  if (!JSON_TYPE.test(type.split(';')[0]!.trim())) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest(`The body of batch request ${index + 1} is not valid JSON.`);
  }
}

/** Multipart parts as the JSON format's requests, and their framing. */
async function requestsOfParts(
  parts: readonly BatchPart[],
  pause: () => Promise<void>,
): Promise<{ raw: unknown; framing: ODataBatchFraming }> {
  const requests: Record<string, unknown>[] = [];
  const ids: (string | undefined)[] = [];
  const framing: (number | number[])[] = [];
  const add = (message: HttpMessage, group: string | undefined): number => {
    const index = requests.length;
    const start = message.start as { method: string; url: string };
    ids.push(message.contentId);
    requests.push({
      // A part without a Content-ID gets an id no reference names (`~n`).
      id: message.contentId ?? `~${index + 1}`,
      method: start.method,
      url: start.url,
      headers: headerObject(message.headers),
      ...(group === undefined ? {} : { atomicityGroup: group }),
      body: bindsAsReferences(bodyOf(message, index)),
    });
    return index;
  };
  for (const [i, part] of parts.entries()) {
    if ('message' in part) framing.push(add(part.message, undefined));
    else framing.push(part.changeset.map((message) => add(message, `~changeset${i + 1}`)));
    await pause();
  }
  return { raw: { requests }, framing: { kind: 'multipart', parts: framing, ids } };
}

/** Each JSON request's `@odata.bind` references read as `{Id}` references (bindsAsReferences). */
function withBindReferences(raw: unknown): unknown {
  if (!isRecord(raw) || !Array.isArray(raw.requests)) return raw;
  const requests = raw.requests.map((request: unknown) =>
    isRecord(request) && isRecord(request.body) ? { ...request, body: bindsAsReferences(request.body) } : request,
  );
  return { ...raw, requests };
}

/** Header names as HTTP/1.1 messages spell them (clients look up `Content-Type` exactly). */
function headerName(name: string): string {
  const special: Record<string, string> = {
    etag: 'ETag',
    'odata-entityid': 'OData-EntityId',
  };
  return (
    special[name] ?? name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase())
  );
}

function messageOf(answer: Answer, contentId: string | undefined): HttpMessage {
  return {
    ...(contentId === undefined ? {} : { contentId }),
    start: { status: answer.status },
    headers: Object.entries(answer.headers).map(([name, value]) => [headerName(name), value]),
    body: Buffer.from(answer.body ?? '', 'utf8'),
  };
}

function jsonEntry(id: string, answer: Answer): string {
  const json = answer.headers['content-type']?.startsWith('application/json');
  const body = answer.body === undefined ? '' : `,"body":${json ? answer.body : JSON.stringify(answer.body)}`;
  return `{"id":${JSON.stringify(id)},"status":${answer.status},"headers":${JSON.stringify(answer.headers)}${body}}`;
}

/**
 * The parts of a multipart answer: each request's response; a changeset's in a changeset, or, when
 * one of its requests failed, the one response of the request that failed it (not a 424 of the rest).
 */
function multipartAnswer(
  framing: Extract<ODataBatchFraming, { kind: 'multipart' }>,
  answers: readonly Answer[],
): BatchPart[] {
  return framing.parts.map((part) => {
    if (typeof part === 'number') return { message: messageOf(answers[part]!, framing.ids[part]) };
    const failed = part.filter((i) => answers[i]!.status >= 400);
    if (failed.length) {
      const culprit = failed.find((i) => answers[i]!.status !== 424) ?? failed[0]!;
      return { message: messageOf(answers[culprit]!, framing.ids[culprit]) };
    }
    return { changeset: part.map((i) => messageOf(answers[i]!, framing.ids[i])) };
  });
}

export function odataBatchFormat(limits: ODataBatchLimits): BatchFormat<ODataBatchFraming> {
  const readBytes = batchBytesReader(limits.maxBytes);
  const multipartLimits = { maxMessages: limits.maxRequests, maxHeaderBytes: DEFAULT_MAX_HEADER_BYTES };
  return {
    async read(req, res) {
      const multipart = Boolean(req.is('multipart/mixed'));
      if (!req.is('application/json') && !multipart) {
        throw unsupportedMediaType('POST /odata/$batch takes application/json or multipart/mixed.');
      }
      const bytes = await readBytes(req, res);
      if (!multipart) return { raw: withBindReferences(await batchJsonOf(req, bytes)), framing: { kind: 'json' } };
      const pause = turnSlicer(PARSE_SLICE_MS);
      const parts = await parseMultipartBatch(bytes, req.get('content-type')!, multipartLimits, 'request', pause);
      return requestsOfParts(parts, pause);
    },
    root: (req: Request) => ({
      path: ODATA_ROOT,
      readOf: odataBatchReadOf(serviceRootOf(req), limits.maxTop),
      writeOf: odataBatchWriteOf(serviceRootOf(req)),
    }),
    empty: (framing) =>
      framing.kind === 'json' ? { type: 'application/json', text: '{"responses":[]}' } : multipartText([]),
    async render(recorded, framing, steps, req, pause) {
      if ('responses' in recorded) return { type: 'application/json', text: recorded.responses };
      const serviceRoot = serviceRootOf(req);
      const entries = (await parseJsonInSlices(recorded.results, pause)) as BatchEntry[];
      const answers: Answer[] = [];
      for (const [i, { result }] of entries.entries()) {
        answers.push(odataStepAnswer(result, steps[i], serviceRoot, recorded.walPosition));
        await pause();
      }
      if (framing.kind === 'multipart') return multipartText(multipartAnswer(framing, answers));
      const parts: string[] = [];
      for (const [i, answer] of answers.entries()) {
        parts.push(jsonEntry(entries[i]!.id, answer));
        await pause();
      }
      return { type: 'application/json', text: `{"responses":[${parts.join(',')}]}` };
    },
  };
}

function multipartText(parts: readonly BatchPart[]): { type: string; text: Buffer } {
  const boundary = `batchresponse_${randomUUID()}`;
  const body = renderMultipartBatch(parts, boundary, () => `changesetresponse_${randomUUID()}`);
  return { type: `multipart/mixed; boundary=${boundary}`, text: body };
}
