import type { Response } from 'express';
import { JSON_TYPE, type Answer } from './answer';

/** Bodies up to this size are written in one call; larger ones a slice at a time. */
const ONE_WRITE_CHARS = 1024 * 1024;

/** What `res.type(JSON_TYPE)` then `res.send(text)` make of the content type. */
const JSON_WITH_CHARSET = `${JSON_TYPE}; charset=utf-8`;

/**
 * A JSON answer to a plain GET, written as `res.send` would write it (the same headers in the same
 * order) without its content-type parsing, freshness and length checks: most reads answer this way.
 */
function sendPlainJson(res: Response, answer: Answer, body: string): boolean {
  // answer.headers['content-type'] is JSON_TYPE (the caller checked).
  const { req } = res;
  if (answer.status !== 200 || req.method !== 'GET' || body.length > ONE_WRITE_CHARS) return false;
  // Conditional requests keep express's freshness check (a 304 by its rules).
  if (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined) return false;
  if (res.getHeader('transfer-encoding') !== undefined) return false;
  res.statusCode = 200;
  for (const name in answer.headers) {
    if (name === 'content-type') res.setHeader('Content-Type', JSON_WITH_CHARSET);
    else res.setHeader(name, answer.headers[name]!);
  }
  res.setHeader('Content-Length', String(Buffer.byteLength(body, 'utf8')));
  res.end(body, 'utf8');
  return true;
}

/** Writes an Answer (answer.ts) to the socket: status, headers, body. */
export function sendAnswer(res: Response, answer: Answer): void {
  if (
    answer.body !== undefined &&
    answer.headers['content-type'] === JSON_TYPE &&
    sendPlainJson(res, answer, answer.body)
  )
    return;
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) {
    if (name === 'content-type') res.type(value);
    else res.setHeader(name, value);
  }
  if (answer.body === undefined) res.end();
  else sendText(res, answer.body);
}

/**
 * Writes a text body. One of up to MAX_RESPONSE_BYTES (32 MiB: a page, a `$batch`'s answers) is
 * encoded and written 1 MiB at a time, a turn of the event loop between slices and the socket's
 * backpressure respected: encoding it in one call held the loop 20-50 ms (the hostile fuzz of
 * bench/README.md). Such a body goes out chunked, without Content-Length.
 */
export function sendText(res: Response, text: string): void {
  if (text.length <= ONE_WRITE_CHARS || res.req.method === 'HEAD') {
    res.send(text);
    return;
  }
  // What res.send adds to a string body's type.
  const type = res.get('content-type');
  if (type && !/;\s*charset=/i.test(type)) res.setHeader('content-type', `${type}; charset=utf-8`);
  void writeInSlices(res, text);
}

async function writeInSlices(res: Response, text: string): Promise<void> {
  for (let at = 0; at < text.length && !res.destroyed;) {
    let end = Math.min(text.length, at + ONE_WRITE_CHARS);
    // Never between the two halves of a surrogate pair: each slice is encoded on its own.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    const flushed = res.write(text.slice(at, end));
    at = end;
    await new Promise<void>((resolve) => {
      if (flushed) setImmediate(resolve);
      else {
        const settle = () => {
          res.off('drain', settle);
          res.off('close', settle);
          resolve();
        };
        res.once('drain', settle);
        res.once('close', settle);
      }
    });
  }
  if (!res.destroyed) res.end();
}
