import express, { type Request, type Response } from 'express';
import { JSONParser } from '@streamparser/json';
import { badRequest, tooLarge, unsupportedMediaType } from '../../domain/errors/domain-error';
import { turnSlicer } from '../limits/turn-slicer';

/**
 * A `$batch` body (up to BATCH_MAX_BYTES, 16 MiB) read into JSON without holding the event loop:
 * JSON.parse of 16 MiB is one call of 30-110 ms on a busy 2-core machine (the hostile fuzz of
 * bench/README.md saw it as the longest turns), so the bytes go through a streaming parser
 * (@streamparser/json) 64 KiB at a time, other callers getting a turn every few milliseconds. It
 * accepts and builds exactly what JSON.parse does (a property in test/unit/batch-body.test.ts),
 * costs about three times its CPU, and takes a `__proto__` member as data, as JSON.parse does.
 */

const SLICE_BYTES = 64 * 1024;
const PARSE_SLICE_MS = 10;

function mebibytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`;
}

/** The JSON value of `body`, parsed a slice at a time with `pause` between slices; throws on invalid JSON. */
export async function parseJsonInSlices(body: Uint8Array, pause: () => Promise<void>): Promise<unknown> {
  // What body-parser's json answers for an empty body.
  if (body.length === 0) return {};
  const parser = new JSONParser({ paths: ['$'], keepStack: false });
  let root: { value: unknown } | undefined;
  parser.onValue = ({ value, stack }) => {
    if (stack.length === 0) root = { value };
  };
  for (let at = 0; at < body.length; at += SLICE_BYTES) {
    parser.write(body.subarray(at, at + SLICE_BYTES));
    await pause();
  }
  // A number at the root ends only with the input.
  if (!parser.isEnded) parser.end();
  if (!root) throw new SyntaxError('no JSON value');
  return root.value;
}

/** Reads and parses a batch body: 415 unless JSON in UTF-8, 413 past `maxBytes`, 400 unless valid JSON. */
export function batchBodyReader(maxBytes: number): (req: Request, res: Response) => Promise<unknown> {
  // The bytes as they came (inflated when compressed), within the limit; parsed below.
  const readRaw = express.raw({ limit: maxBytes, type: () => true });
  return async (req, res) => {
    if (!req.is('application/json')) throw unsupportedMediaType('POST /$batch takes application/json.');
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw unsupportedMediaType(`A batch is JSON in UTF-8 (RFC 8259), not ${charset}.`);
    }
    const raw = await new Promise<unknown>((resolve, reject) =>
      readRaw(req, res, (err?: unknown) => {
        if (!err) return resolve(req.body);
        if ((err as { type?: string }).type !== 'entity.too.large') return reject(err);
        reject(
          tooLarge(`The batch body exceeds ${mebibytes(maxBytes)} (BATCH_MAX_BYTES). Split it into several batches.`),
        );
      }),
    );
    // No body at all (no content-length, no chunks) leaves req.body undefined. The request keeps
    // no copy: the parsed value is all that is needed, and the request lives as long as the batch.
    const bytes = Buffer.isBuffer(raw) ? raw : Buffer.alloc(0);
    req.body = undefined;
    try {
      return await parseJsonInSlices(bytes, turnSlicer(PARSE_SLICE_MS));
    } catch {
      throw badRequest('The request body is not valid JSON.');
    }
  };
}
