import { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Knex } from 'knex';
import type { BatchCommand, BatchResult, BatchStep } from '../../domain/batch/batch-command';
import { findBatchRecord } from '../../db/commands/command-log';
import { parseBatch, type BatchRequest } from '../../domain/batch/batch-request';
import type { CommandResult } from '../../domain/commands/command';
import { DomainError } from '../../domain/errors/domain-error';
import { idempotentCommandId, newCommandId, requestHashInSlices } from '../../domain/writes/command-ids';
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
import { turnSlicer } from '../limits/turn-slicer';
import { batchBodyReader } from './batch-body';
import { sendText } from '../http/send-answer';
import { batchResponseTextInSlices } from '../http/batch-answer';

/**
 * `POST /$batch` (DESIGN §12): the OData 4.01 JSON batch format. The API checks the batch as a whole
 * (one 400 when it is not a valid batch) and each request as it would check it alone, then queues the
 * batch as one job; a command worker runs it and records every request's result
 * (workers/commands/batch-runner.ts), from which the response is rendered here (api/http/batch-answer.ts).
 * Served before the general body parser (`ownBody` in the route table): a batch has a body limit of
 * its own (BATCH_MAX_BYTES).
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

/**
 * How long checking a batch's requests may hold the event loop before other callers get a turn:
 * 16 MiB of requests (e.g. 32 geometries of 500,000 characters at 6-7 ms each) is one request's work.
 */
const CHECK_SLICE_MS = 10;

export function batchHandler(deps: BatchRouteDeps): RequestHandler {
  const readBody = batchBodyReader(deps.limits.maxBytes);

  // One batch at a time is checked per process (api/limits/cpu-lane.ts).
  const lane = cpuLane(1);

  async function handle(req: Request, res: Response): Promise<void> {
    const checked = await readAndCheck(req, res);
    if (checked === undefined) return;
    const { batch, leave } = checked;
    const sending = sendCommand<BatchResult | CommandResult>(req, res, deps.commandBus, batch, deps.limits.timeoutMs);
    // The next batch may start being checked while this one is signed and queued (both a slice at
    // a time) and runs.
    setImmediate(leave);
    const result = await sending;
    if (result === undefined) return;
    if ('batch' in result) {
      const recorded = await findBatchRecord(deps.knex, batch.commandId);
      if (recorded === null) throw new Error(`batch ${batch.commandId} finished without a recorded response`);
      sendText(res.type('application/json'), await batchResponseTextInSlices(recorded, turnSlicer(CHECK_SLICE_MS)));
    } else if (!result.ok) throw DomainError.from(result.failure);
    else throw new Error('a batch answered with the result of a single command');
  }

  /**
   * The batch to queue, checked and charged, with its place in the lane; undefined when it was
   * answered here (no requests). The body and its parsed requests live only in this call: a batch
   * then waits seconds for its worker, and holding 16 MiB of them per batch in flight made the
   * API's full collections take 100+ ms (the command bus drops the steps once queued).
   */
  async function readAndCheck(
    req: Request,
    res: Response,
  ): Promise<{ batch: BatchCommand; leave: () => void } | undefined> {
    const raw = await readBody(req, res);
    const leave = await lane.enter();
    try {
      const batch = await checkedBatch(req, res, raw);
      if (batch !== undefined) return { batch, leave };
    } catch (err) {
      leave();
      throw err;
    }
    leave();
    return undefined;
  }

  async function checkedBatch(req: Request, res: Response, raw: unknown): Promise<BatchCommand | undefined> {
    const requests = parseBatch(raw, { maxRequests: deps.limits.maxRequests });
    const key = idempotencyKeyOf(req);
    const caller = callerOf(req);
    if (requests.length === 0) {
      res.type('application/json').send('{"responses":[]}');
      return undefined;
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
    const pause = turnSlicer(CHECK_SLICE_MS);
    for (const request of requests) {
      steps.push(stepOf(request, context));
      if (!earlier.has(request.id)) earlier.set(request.id, request);
      await pause();
    }
    // The batch's budgets, before anything is queued (DESIGN §13): refused whole, nothing runs.
    checkBatchReadRows(steps, deps.readLimits, deps.limits.maxReadRows);
    await deps.chargeBatch(caller.subject, requests.length);
    return {
      commandId: key === undefined ? newCommandId() : idempotentCommandId(caller.subject, key),
      name: 'batch',
      subject: caller.subject,
      issuedAt: new Date().toISOString(),
      ...(key === undefined ? {} : { requestHash: await requestHashInSlices('POST', '$batch', raw, pause) }),
      ...(deps.consistencyTokens ? { consistencyTokens: true as const } : {}),
      steps,
    };
  }

  return (req: Request, res: Response, next: NextFunction) => {
    handle(req, res).catch(next);
  };
}
