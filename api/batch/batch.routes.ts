import { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Knex } from 'knex';
import type {
  BatchCommand,
  BatchRead,
  BatchResult,
  BatchStep,
  BatchWrite,
  LegacyRecordedBatch,
  RecordedBatch,
} from '../../domain/batch/batch-command';
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
import { stepOf, type StepContext } from './batch-request-checks';
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

/** What rendering an answer needs of a queued step: its read's key and `/odata` envelope (no query, no body). */
export interface AnsweredStep {
  read?: Pick<BatchRead, 'key' | 'keyReference' | 'odata'>;
  write?: Pick<BatchWrite, 'odata'>;
}

/**
 * What differs between the batch formats of the service roots: how a body is read into the JSON
 * batch format's requests (`{"requests": [...]}`), the root the requests are resolved under, and
 * how the recorded results are answered. The root's `$batch` is the JSON format in the spec's
 * answers (ROOT_BATCH below); `/odata/$batch` adds multipart/mixed and OData answers
 * (api/odata/odata-batch.ts).
 */
export interface BatchFormat<Framing = undefined> {
  /** The body as the JSON format's object (what parseBatch checks and an Idempotency-Key fingerprints), and how it was framed. */
  read(req: Request, res: Response): Promise<{ raw: unknown; framing: Framing }>;
  /** The service root the requests are resolved under (the root's when absent). */
  root?(req: Request): StepContext['root'];
  /** A batch with no requests, answered without queueing anything. */
  empty(framing: Framing): { type: string; text: string | Buffer };
  /** The answer of the finished batch, rendered a slice at a time; `steps` as they were queued. */
  render(
    recorded: RecordedBatch | LegacyRecordedBatch,
    framing: Framing,
    steps: readonly AnsweredStep[],
    req: Request,
    pause: () => Promise<void>,
  ): Promise<{ type: string; text: string | Buffer }>;
}

/** The root's `$batch` (DESIGN §12). */
function rootBatch(maxBytes: number): BatchFormat {
  const readBody = batchBodyReader(maxBytes);
  return {
    read: async (req, res) => ({ raw: await readBody(req, res), framing: undefined }),
    empty: () => ({ type: 'application/json', text: '{"responses":[]}' }),
    render: async (recorded, _framing, _steps, _req, pause) => ({
      type: 'application/json',
      text: await batchResponseTextInSlices(recorded, pause),
    }),
  };
}

/**
 * How long checking a batch's requests may hold the event loop before other callers get a turn:
 * 16 MiB of requests (e.g. 32 geometries of 500,000 characters at 6-7 ms each) is one request's work.
 */
const CHECK_SLICE_MS = 10;

export function batchHandler<Framing = undefined>(deps: BatchRouteDeps, given?: BatchFormat<Framing>): RequestHandler {
  const format = given ?? (rootBatch(deps.limits.maxBytes) as unknown as BatchFormat<Framing>);

  // One batch at a time is checked per process (api/limits/cpu-lane.ts).
  const lane = cpuLane(1);

  async function handle(req: Request, res: Response): Promise<void> {
    const checked = await readAndCheck(req, res);
    if (checked === undefined) return;
    const { batch, leave, framing } = checked;
    // What the answer is rendered with: little of each step (a write's body or a query can be large).
    const steps = batch.steps.map(({ read, write }): AnsweredStep => {
      if (write?.odata) return { write: { odata: write.odata } };
      if (!read) return {};
      const { key, keyReference, odata } = read;
      return {
        read: {
          ...(key === undefined ? {} : { key }),
          ...(keyReference === undefined ? {} : { keyReference }),
          ...(odata ? { odata } : {}),
        },
      };
    });
    const sending = sendCommand<BatchResult | CommandResult>(req, res, deps.commandBus, batch, deps.limits.timeoutMs);
    // The next batch may start being checked while this one is signed and queued (both a slice at
    // a time) and runs.
    setImmediate(leave);
    const result = await sending;
    if (result === undefined) return;
    if ('batch' in result) {
      const recorded = await findBatchRecord(deps.knex, batch.commandId);
      if (recorded === null) throw new Error(`batch ${batch.commandId} finished without a recorded response`);
      const answer = await format.render(recorded, framing, steps, req, turnSlicer(CHECK_SLICE_MS));
      if (typeof answer.text === 'string') sendText(res.type(answer.type), answer.text);
      else res.type(answer.type).send(answer.text);
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
  ): Promise<{ batch: BatchCommand; leave: () => void; framing: Framing } | undefined> {
    const { raw, framing } = await format.read(req, res);
    const leave = await lane.enter();
    try {
      const batch = await checkedBatch(req, res, raw, framing);
      if (batch !== undefined) return { batch, leave, framing };
    } catch (err) {
      leave();
      throw err;
    }
    leave();
    return undefined;
  }

  async function checkedBatch(
    req: Request,
    res: Response,
    raw: unknown,
    framing: Framing,
  ): Promise<BatchCommand | undefined> {
    const requests = parseBatch(raw, { maxRequests: deps.limits.maxRequests });
    const key = idempotencyKeyOf(req);
    const caller = callerOf(req);
    if (requests.length === 0) {
      const answer = format.empty(framing);
      res.type(answer.type).send(answer.text);
      return undefined;
    }
    const earlier = new Map<string, BatchRequest>();
    const root = format.root?.(req);
    const context: StepContext = {
      ...(root ? { root } : {}),
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
