import { badRequest, tooLarge } from '../../domain/errors/domain-error';

/**
 * The `multipart/mixed` batch format of OData 4.0 (Part 1 §11.7, RFC 2046): a batch is parts
 * separated by a boundary, each an HTTP message (`Content-Type: application/http`) or a changeset
 * (a nested `multipart/mixed`, one level deep) of such messages. Parsing is linear (Buffer.indexOf
 * finds each delimiter; each part's header block and start line are read once, within limits), and
 * `pause` gives other callers a turn between parts. Every fault is a 400 naming it, never a 5xx.
 * No multipart library on npm fits: the maintained ones read `multipart/form-data` (they require
 * `Content-Disposition`) or are ESM-only, and none knows HTTP messages inside parts.
 */

/** One HTTP message of a batch: a request (with its request line) or a response (with its status). */
export interface HttpMessage {
  /** `Content-ID` of the MIME part (or of the message's own headers), when given. */
  contentId?: string;
  /** The request line's method and URL, or the status line's code. */
  start: { method: string; url: string } | { status: number };
  /** Header names as written, in order (renderers keep their spelling: clients read `Content-Type`). */
  headers: [string, string][];
  body: Buffer;
}

/** A part of a batch: one message, or a changeset of them. */
export type BatchPart = { message: HttpMessage } | { changeset: HttpMessage[] };

export interface MultipartLimits {
  /** BATCH_MAX_REQUESTS: messages in the whole batch. */
  maxMessages: number;
  /** The bytes of one header block (a part's, or a message's start line and headers). */
  maxHeaderBytes: number;
}

export const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
/** Header lines of one block. */
const MAX_HEADERS = 50;
/** RFC 2046: 1 to 70 characters of the boundary alphabet. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
const CRLF = '\r\n';

const noPause = async () => {};

/** The boundary parameter of a `multipart/mixed` media type; a 400 when there is none or it is malformed. */
export function boundaryOf(contentType: string): string {
  const match = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw badRequest('multipart/mixed needs a boundary parameter in its Content-Type.');
  if (!BOUNDARY.test(boundary))
    throw badRequest('The multipart boundary is not 1 to 70 boundary characters (RFC 2046).');
  return boundary;
}

function isMultipartMixed(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]!.trim().toLowerCase() === 'multipart/mixed';
}

function headerOf(headers: readonly [string, string][], name: string): string | undefined {
  const lower = name.toLowerCase();
  return headers.find(([key]) => key.toLowerCase() === lower)?.[1];
}

/** Where a line ends at or after `from` (its LF), and the length of its terminator (CRLF or LF). */
function lineEnd(bytes: Buffer, from: number, end: number): { at: number; eol: number } | undefined {
  const at = bytes.indexOf(10, from);
  if (at < 0 || at >= end) return undefined;
  return { at, eol: at > from && bytes[at - 1] === 13 ? 2 : 1 };
}

/**
 * A header block from `from` up to its empty line, within maxHeaderBytes: its lines and where the
 * content after the empty line starts. `what` names the block in the 400s.
 */
function headerBlock(
  bytes: Buffer,
  from: number,
  end: number,
  limits: MultipartLimits,
  what: string,
): { lines: string[]; next: number } {
  const lines: string[] = [];
  const limit = Math.min(end, from + limits.maxHeaderBytes);
  for (let at = from; ;) {
    const line = lineEnd(bytes, at, end);
    if (!line || line.at >= limit) {
      if (end - from > limits.maxHeaderBytes) {
        throw badRequest(`The headers of ${what} exceed ${limits.maxHeaderBytes} bytes.`);
      }
      throw badRequest(`The headers of ${what} do not end with an empty line.`);
    }
    const text = bytes.toString('latin1', at, line.at + 1 - line.eol);
    if (text === '') return { lines, next: line.at + 1 };
    if (lines.length >= MAX_HEADERS) throw badRequest(`${what} has more than ${MAX_HEADERS} header lines.`);
    lines.push(text);
    at = line.at + 1;
  }
}

function headersOf(lines: readonly string[], what: string): [string, string][] {
  return lines.map((line) => {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) {
      throw badRequest(`${what} has a malformed header line: '${line.slice(0, 100)}'.`);
    }
    return [name, line.slice(colon + 1).trim()];
  });
}

/**
 * Where the delimiter line at `position` ends: after `--boundary--` (the close) or after its
 * transport padding and line break; undefined when `--boundary` there is only the start of other text.
 */
function delimiterEnd(bytes: Buffer, position: number, end: number): { next: number; close: boolean } | undefined {
  let at = position;
  if (bytes[at] === 45 && bytes[at + 1] === 45 && at + 1 < end) return { next: at + 2, close: true };
  while (at < end && (bytes[at] === 32 || bytes[at] === 9)) at++;
  if (bytes[at] === 13) at++;
  return bytes[at] === 10 && at < end ? { next: at + 1, close: false } : undefined;
}

/** Delimiter candidates examined between two turns for other callers. */
const CANDIDATES_PER_TURN = 4096;

/**
 * The bodies between the delimiters of `boundary` in bytes[from, end), in order: a 400 without the
 * closing delimiter, a 413 past `maxBodies.left` bodies (found before the rest is searched). A search examines
 * only line starts (`\n--boundary`); texts that start like a delimiter and are not one are skipped,
 * other callers getting a turn every few thousand of them.
 */
async function bodiesOf(
  bytes: Buffer,
  from: number,
  end: number,
  boundary: string,
  what: string,
  maxBodies: { left: number; limit: number },
  pause: () => Promise<void>,
): Promise<[number, number][]> {
  const dash = Buffer.from(`--${boundary}`, 'latin1');
  const lineDash = Buffer.from(`\n--${boundary}`, 'latin1');
  // Searches stop at `end` (a changeset's part), so no search reads past its own part.
  const within = bytes.subarray(0, end);
  let candidates = 0;
  /** The next delimiter at or after `search`: at the body's start or a line's, ending as a delimiter does. */
  const nextDelimiter = async (search: number) => {
    if (within.subarray(search, search + dash.length).equals(dash)) {
      const after = delimiterEnd(bytes, search + dash.length, end);
      if (after) return { at: search, ...after };
    }
    for (let at = search; at < end;) {
      const hit = within.indexOf(lineDash, at);
      if (hit < 0) return undefined;
      const after = delimiterEnd(bytes, hit + lineDash.length, end);
      if (after) return { at: hit + 1, ...after };
      at = hit + 1;
      if (++candidates % CANDIDATES_PER_TURN === 0) await pause();
    }
    return undefined;
  };
  // The first delimiter may open the body or follow a preamble.
  let delimiter = await nextDelimiter(from);
  if (!delimiter) throw badRequest(`${what} has no delimiter of its boundary '${boundary}'.`);
  const bodies: [number, number][] = [];
  while (!delimiter.close) {
    if (bodies.length >= maxBodies.left) throw tooManyRequests(maxBodies.limit);
    const start = delimiter.next;
    const following = await nextDelimiter(start);
    if (!following) throw badRequest(`${what} does not end with its closing delimiter '--${boundary}--'.`);
    // The line break before a delimiter belongs to it, not to the body.
    const at = following.at;
    const bodyEnd = at === start ? start : at - (at - 2 >= start && bytes[at - 2] === 13 ? 2 : 1);
    bodies.push([start, bodyEnd]);
    delimiter = following;
  }
  return bodies;
}

function tooManyRequests(max: number) {
  return tooLarge(`The batch holds more than ${max} requests (BATCH_MAX_REQUESTS). Split it into several batches.`);
}

/** The HTTP message of an `application/http` part: a start line, headers, an empty line, the body. */
function messageOf(
  bytes: Buffer,
  start: number,
  end: number,
  limits: MultipartLimits,
  kind: 'request' | 'response',
  what: string,
): Omit<HttpMessage, 'contentId'> {
  const line = lineEnd(bytes, start, Math.min(end, start + limits.maxHeaderBytes));
  if (!line) throw badRequest(`${what} has no ${kind === 'request' ? 'request' : 'status'} line.`);
  const text = bytes.toString('latin1', start, line.at + 1 - line.eol);
  let first: HttpMessage['start'];
  if (kind === 'request') {
    // The URL is what lies between the method and the version: clients (@odata/client) leave the
    // spaces of a `$filter` unencoded there.
    // (Line breaks cannot be in `text`; other control characters are refused with the line.)
    const request = /^([A-Za-z]+) (\S(?:[^\p{Cc}]*\S)?) HTTP\/1\.[01]$/u.exec(text);
    if (!request) throw badRequest(`${what}: '${text.slice(0, 100)}' is not a request line (METHOD URL HTTP/1.1).`);
    first = { method: request[1]!.toUpperCase(), url: request[2]! };
  } else {
    const status = /^HTTP\/1\.[01] ([1-5][0-9]{2})(?: .*)?$/.exec(text);
    if (!status) throw badRequest(`${what}: '${text.slice(0, 100)}' is not a status line (HTTP/1.1 200 OK).`);
    first = { status: Number(status[1]) };
  }
  const { lines, next } = headerBlock(bytes, line.at + 1, end, limits, what);
  return { start: first, headers: headersOf(lines, what), body: bytes.subarray(next, end) };
}

/**
 * The parts of a multipart batch body (requests, or responses for `kind: 'response'`). A 400 for
 * malformed framing, a 413 past maxMessages (counted before the messages are read).
 */
export async function parseMultipartBatch(
  bytes: Buffer,
  contentType: string,
  limits: MultipartLimits,
  kind: 'request' | 'response' = 'request',
  pause: () => Promise<void> = noPause,
): Promise<BatchPart[]> {
  const boundary = boundaryOf(contentType);
  const parts: BatchPart[] = [];
  let messages = 0;
  const count = () => {
    if (++messages > limits.maxMessages) throw tooManyRequests(limits.maxMessages);
  };
  // A part holds a request (or a changeset of them): more parts than requests allowed is a 413.
  const all = { left: limits.maxMessages, limit: limits.maxMessages };
  const bodies = await bodiesOf(bytes, 0, bytes.length, boundary, 'the batch', all, pause);
  for (const [index, [start, end]] of bodies.entries()) {
    const what = `batch part ${index + 1}`;
    const { lines, next } = headerBlock(bytes, start, end, limits, what);
    const headers = headersOf(lines, what);
    const type = headerOf(headers, 'content-type');
    if (isMultipartMixed(type)) {
      const inner = boundaryOf(type!);
      const changeset: HttpMessage[] = [];
      const inChangeset = await bodiesOf(
        bytes,
        next,
        end,
        inner,
        `the changeset of ${what}`,
        { left: limits.maxMessages - messages, limit: limits.maxMessages },
        pause,
      );
      for (const [i, [from, to]] of inChangeset.entries()) {
        const whatInner = `part ${i + 1} of the changeset of ${what}`;
        count();
        const block = headerBlock(bytes, from, to, limits, whatInner);
        const innerHeaders = headersOf(block.lines, whatInner);
        if (isMultipartMixed(headerOf(innerHeaders, 'content-type'))) {
          throw badRequest(`${whatInner}: a changeset cannot hold another changeset (one level of nesting).`);
        }
        changeset.push(httpPart(bytes, innerHeaders, block.next, to, limits, kind, whatInner));
        await pause();
      }
      parts.push({ changeset });
    } else {
      count();
      parts.push({ message: httpPart(bytes, headers, next, end, limits, kind, what) });
    }
    await pause();
  }
  return parts;
}

function httpPart(
  bytes: Buffer,
  headers: [string, string][],
  start: number,
  end: number,
  limits: MultipartLimits,
  kind: 'request' | 'response',
  what: string,
): HttpMessage {
  const type = headerOf(headers, 'content-type')?.split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/http') {
    throw badRequest(`${what}: Content-Type must be application/http or multipart/mixed, not '${type ?? ''}'.`);
  }
  const encoding = headerOf(headers, 'content-transfer-encoding')?.toLowerCase();
  if (encoding !== undefined && encoding !== 'binary' && encoding !== '8bit' && encoding !== '7bit') {
    throw badRequest(`${what}: Content-Transfer-Encoding must be binary, not '${encoding}'.`);
  }
  const message = messageOf(bytes, start, end, limits, kind, what);
  const contentId = headerOf(headers, 'content-id') ?? headerOf(message.headers, 'content-id');
  return { ...(contentId === undefined ? {} : { contentId }), ...message };
}

// Rendering.

function messageText(message: HttpMessage): string {
  const start =
    'status' in message.start
      ? `HTTP/1.1 ${message.start.status} ${STATUS_TEXT[message.start.status] ?? 'Status'}`
      : `${message.start.method} ${message.start.url} HTTP/1.1`;
  const headers = message.headers.map(([name, value]) => `${name}: ${value}${CRLF}`).join('');
  return `${start}${CRLF}${headers}${CRLF}`;
}

function partChunks(message: HttpMessage, boundary: string): (string | Buffer)[] {
  const id = message.contentId === undefined ? '' : `Content-ID: ${message.contentId}${CRLF}`;
  return [
    `--${boundary}${CRLF}Content-Type: application/http${CRLF}Content-Transfer-Encoding: binary${CRLF}${id}${CRLF}`,
    messageText(message),
    message.body,
    CRLF,
  ];
}

/**
 * A multipart batch body of `parts` under `boundary`; changesets take `<boundary>_<n>`-style
 * boundaries from `changesetBoundary`. What parseMultipartBatch reads back as the same parts.
 */
export function renderMultipartBatch(
  parts: readonly BatchPart[],
  boundary: string,
  changesetBoundary: (index: number) => string = (index) => `changeset_${index}_${boundary}`.slice(0, 70),
): Buffer {
  const chunks: (string | Buffer)[] = [];
  parts.forEach((part, index) => {
    if ('message' in part) {
      chunks.push(...partChunks(part.message, boundary));
      return;
    }
    const inner = changesetBoundary(index);
    chunks.push(`--${boundary}${CRLF}Content-Type: multipart/mixed; boundary=${inner}${CRLF}${CRLF}`);
    for (const message of part.changeset) chunks.push(...partChunks(message, inner));
    chunks.push(`--${inner}--${CRLF}`);
  });
  chunks.push(`--${boundary}--${CRLF}`);
  return Buffer.concat(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk)));
}

/** Reason phrases of the statuses a batch answers (clients read only the code). */
const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  424: 'Failed Dependency',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
