import express, { type Request, type Response } from 'express';
import { badRequest, tooLarge, unsupportedMediaType } from '../../domain/errors/domain-error';
import { turnSlicer } from '../limits/turn-slicer';
import { parseJsonInSlices } from '../http/json-in-slices';

/**
 * A `$batch` body (up to BATCH_MAX_BYTES, 16 MiB) read as bytes, then parsed a slice at a time
 * (api/http/json-in-slices.ts) so that it never holds the event loop in one call.
 */

const PARSE_SLICE_MS = 10;

function mebibytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`;
}

/** Reads a batch body's bytes (inflated when compressed): 413 past `maxBytes`. */
export function batchBytesReader(maxBytes: number): (req: Request, res: Response) => Promise<Buffer> {
  const readRaw = express.raw({ limit: maxBytes, type: () => true });
  return async (req, res) => {
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
    req.body = undefined;
    return Buffer.isBuffer(raw) ? raw : Buffer.alloc(0);
  };
}

/** A batch body in JSON: 415 unless in UTF-8; parsed a slice at a time, 400 unless valid JSON. */
export async function batchJsonOf(req: Request, bytes: Buffer): Promise<unknown> {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw unsupportedMediaType(`A batch is JSON in UTF-8 (RFC 8259), not ${charset}.`);
  }
  try {
    return await parseJsonInSlices(bytes, turnSlicer(PARSE_SLICE_MS));
  } catch {
    throw badRequest('The request body is not valid JSON.');
  }
}

/** Reads and parses a batch body: 415 unless JSON in UTF-8, 413 past `maxBytes`, 400 unless valid JSON. */
export function batchBodyReader(maxBytes: number): (req: Request, res: Response) => Promise<unknown> {
  const readBytes = batchBytesReader(maxBytes);
  return async (req, res) => {
    if (!req.is('application/json')) throw unsupportedMediaType('POST /$batch takes application/json.');
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw unsupportedMediaType(`A batch is JSON in UTF-8 (RFC 8259), not ${charset}.`);
    }
    return batchJsonOf(req, await readBytes(req, res));
  };
}
