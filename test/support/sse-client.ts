import { request as httpRequest, type IncomingMessage } from 'node:http';
import { checkContract } from './contract';
import { eventually } from './queues';

/**
 * A Server-Sent Events client for the GET /Changes tests, parsing the stream by hand (the WHATWG
 * "event stream interpretation": lines split on CR, LF or CRLF, `field: value`, a blank line
 * dispatches, a line starting with `:` is a comment). It keeps what it received, so tests wait for
 * conditions on it rather than for times. The answer's status, headers and media type are checked
 * against the OpenAPI document (an error answer's body too).
 */

export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Every event dispatched so far, in order. */
  events: SseEvent[];
  /** Every comment line so far (without the leading colon and space). */
  comments: string[];
  /** The last `retry:` value. */
  retry: number | undefined;
  /** The raw text received so far. */
  raw(): string;
  /** True once the server ended the stream. */
  ended: boolean;
  /** Waits until `count` events arrived (up to `timeoutMs`), returning them. */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Waits until a condition on the stream holds. */
  waitUntil(check: () => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

export interface SseError {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** Opens `path` on `baseUrl` as an event stream; an answer other than 200 comes back whole. */
export function openSse(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseStream | SseError> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const status = res.statusCode ?? 0;
      const responseHeaders = headersOf(res);
      res.setEncoding('utf8');
      if (status !== 200) {
        let text = '';
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          try {
            checkContract({ method: 'GET', path, status, headers: responseHeaders, text });
            const json = /json/.test(responseHeaders.get('content-type') ?? '') && text ? JSON.parse(text) : undefined;
            resolve({ status, headers: responseHeaders, text, body: json });
          } catch (err) {
            reject(err as Error);
          }
        });
        return;
      }
      try {
        // The body never ends: the contract is checked on the status, headers and media type.
        checkContract({ method: 'GET', path, status, headers: responseHeaders, text: '' });
      } catch (err) {
        req.destroy();
        reject(err as Error);
        return;
      }
      resolve(parsedStream(status, responseHeaders, res, () => req.destroy()));
    });
    req.on('error', reject);
    req.end();
  });
}

function parsedStream(status: number, headers: Headers, res: IncomingMessage, destroy: () => void): SseStream {
  let raw = '';
  let pending = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  let lastId: string | undefined;
  const stream: SseStream = {
    status,
    headers,
    events: [],
    comments: [],
    retry: undefined,
    ended: false,
    raw: () => raw,
    async waitForEvents(count, timeoutMs = 15_000) {
      await stream.waitUntil(() => stream.events.length >= count, timeoutMs);
      return stream.events.slice(0, count);
    },
    async waitUntil(check, timeoutMs = 15_000) {
      await eventually(async () => check(), timeoutMs);
    },
    close: destroy,
  };
  const line = (text: string) => {
    if (text === '') {
      if (data.length) {
        lastId = id ?? lastId;
        stream.events.push({ id: lastId, event: event || 'message', data: data.join('\n') });
      }
      data = [];
      event = '';
      id = undefined;
      return;
    }
    if (text.startsWith(':')) {
      stream.comments.push(text.slice(1).trimStart());
      return;
    }
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'retry' && /^[0-9]+$/.test(value)) stream.retry = Number(value);
  };
  res.on('data', (chunk: string) => {
    raw += chunk;
    pending += chunk;
    const lines = pending.split(/\r\n|\r|\n/);
    pending = lines.pop()!;
    lines.forEach(line);
  });
  res.on('end', () => (stream.ended = true));
  res.on('close', () => (stream.ended = true));
  res.on('error', () => (stream.ended = true));
  return stream;
}

export function isStream(answer: SseStream | SseError): answer is SseStream {
  return 'events' in answer;
}
