import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Knex } from 'knex';
import { performance } from 'node:perf_hooks';
import type { BatchCommand, BatchResult, BatchStep } from '../../domain/batch/batch-command';
import { findBatchResponse } from '../../db/commands/command-log';
import { parseBatch, type BatchRequest } from '../../domain/batch/batch-request';
import type { CommandResult } from '../../domain/commands/command';
import { DomainError, badRequest, tooLarge, unsupportedMediaType } from '../../domain/errors/domain-error';
import { idempotentCommandId, newCommandId, requestHash } from '../../domain/writes/command-ids';
import type { PatchLimits } from '../../domain/writes/json-patch';
import type { ReadLimits } from '../../domain/queries/read-limits';
import type { BatchConfig } from '../../infra/config/load-config';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';
import { callerOf } from '../auth/caller';
import type { CommandBus } from '../commands/command-bus';
import { idempotencyKeyOf } from '../commands/idempotency-key';
import { sendCommand } from '../commands/send-command';
import { checkBatchReadRows } from './batch-read-budget';
import { stepOf } from './batch-request-checks';
import { cpuLane } from '../limits/cpu-lane';

/**
 * `POST /$batch` (DESIGN §12): the OData 4.01 JSON batch format. The API checks the batch as a whole
 * (one 400 when it is not a valid batch) and each request as it would check it alone, then queues the
 * batch as one job; a command worker runs it and answers every request (workers/commands/batch-runner.ts).
 * Served before the general body parser (`ownBody` in the route table): a batch has a body limit of its own (BATCH_MAX_BYTES).
 */

export interface BatchRouteDeps {
  knex: Knex;
  commandBus: CommandBus;
  /** RATE_LIMIT_PER_MINUTE: every request of the batch counts as it would alone, writes included. */
  chargeBatch(subject: string, requests: number): Promise<void>;
  patchLimits: PatchLimits;
  /** The read limits of the API's own GETs (MAX_TOP, MAX_EXPAND_TOP, …): a batch GET's rows are estimated with them. */
  readLimits: ReadLimits;
  geometryLimits: GeometryLimits;
  limits: BatchConfig;
  /** Real authentication: a token in a request's URL is refused as it is on a lone request. */
  queryTokensRefused: boolean;
  /** The API reads from replicas (DATABASE_REPLICA_URLS): write answers then carry a consistency token. */
  consistencyTokens: boolean;
}

/** How long checking a batch's requests may hold the event loop before other callers get a turn. */
const CHECK_SLICE_MS = 10;

/**
 * Checking 16 MiB of requests (each body up to its limits, e.g. 32 geometries of 500,000
 * characters at 6-7 ms each) is one request's work: other callers get a turn every slice.
 */
function pauser(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < CHECK_SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

function mebibytes(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`;
}

export function batchHandler(deps: BatchRouteDeps): RequestHandler {
  const parseJson = express.json({ limit: deps.limits.maxBytes, strict: false, type: () => true });

  /** The body as JSON, within BATCH_MAX_BYTES; 415 for any other media type. */
  function readBody(req: Request, res: Response): Promise<unknown> {
    if (!req.is('application/json')) {
      return Promise.reject(unsupportedMediaType('POST /$batch takes application/json.'));
    }
    return new Promise((resolve, reject) => {
      parseJson(req, res, (err?: unknown) => {
        if (!err) return resolve(req.body);
        const type = (err as { type?: string }).type;
        if (type === 'entity.too.large') {
          reject(
            tooLarge(
              `The batch body exceeds ${mebibytes(deps.limits.maxBytes)} (BATCH_MAX_BYTES). Split it into several batches.`,
            ),
          );
        } else if (type === 'entity.parse.failed') reject(badRequest('The request body is not valid JSON.'));
        else reject(err);
      });
    });
  }

  // One batch at a time is checked, signed and queued per process (api/limits/cpu-lane.ts).
  const lane = cpuLane(1);

  async function handle(req: Request, res: Response): Promise<void> {
    const raw = await readBody(req, res);
    const leave = await lane.enter();
    try {
      await checkAndSend(req, res, raw, leave);
    } finally {
      leave();
    }
  }

  async function checkAndSend(req: Request, res: Response, raw: unknown, leave: () => void): Promise<void> {
    const requests = parseBatch(raw, { maxRequests: deps.limits.maxRequests });
    const key = idempotencyKeyOf(req);
    const caller = callerOf(req);
    if (requests.length === 0) {
      res.type('application/json').send('{"responses":[]}');
      return;
    }
    const earlier = new Map<string, BatchRequest>();
    const context = {
      caller,
      patchLimits: deps.patchLimits,
      geometryLimits: deps.geometryLimits,
      earlier,
      queryTokensRefused: deps.queryTokensRefused,
    };
    const steps: BatchStep[] = [];
    // Checking 1,000 requests is CPU work: other callers get a turn every few milliseconds.
    const pause = pauser();
    for (const request of requests) {
      steps.push(stepOf(request, context));
      if (!earlier.has(request.id)) earlier.set(request.id, request);
      await pause();
    }
    // The batch's budgets, before anything is queued (DESIGN §13): refused whole, nothing runs.
    checkBatchReadRows(steps, deps.readLimits, deps.limits.maxReadRows);
    await deps.chargeBatch(caller.subject, requests.length);
    const batch: BatchCommand = {
      commandId: key === undefined ? newCommandId() : idempotentCommandId(caller.subject, key),
      name: 'batch',
      subject: caller.subject,
      issuedAt: new Date().toISOString(),
      ...(key === undefined ? {} : { requestHash: requestHash('POST', '$batch', raw) }),
      ...(deps.consistencyTokens ? { consistencyTokens: true as const } : {}),
      steps,
    };
    const sending = sendCommand<BatchResult | CommandResult>(req, res, deps.commandBus, batch, deps.limits.timeoutMs);
    // Signed and handed to Redis in this turn: the next batch may start while this one runs.
    setImmediate(leave);
    const result = await sending;
    if (result === undefined) return;
    if ('batch' in result) {
      const responses = await findBatchResponse(deps.knex, batch.commandId);
      if (responses === null) throw new Error(`batch ${batch.commandId} finished without a recorded response`);
      res.type('application/json').send(responses);
    } else if (!result.ok) throw DomainError.from(result.failure);
    else throw new Error('a batch answered with the result of a single command');
  }

  return (req: Request, res: Response, next: NextFunction) => {
    handle(req, res).catch(next);
  };
}
