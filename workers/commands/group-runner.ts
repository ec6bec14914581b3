import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { Model } from 'objection';
import type { BatchCommand, BatchStep } from '../../domain/batch/batch-command';
import type { CommandResult } from '../../domain/commands/command';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { encodeId } from '../../domain/ids/id-codec';
import type { WriteBody } from '../../domain/validation/write-body';
import { bulkCreatable, createAll, takeKeys } from '../../db/commands/bulk-create';
import { DomainError, type Failure } from '../../domain/errors/domain-error';
import type { DomainEvent } from '../../domain/events/domain-event';
import { writeAnswer, type Answer, type WriteMethod } from '../../domain/responses/answer';
import { storableText } from '../../domain/text/storable-text';
import { DEFAULT_PATCH_LIMITS, type PatchLimits } from '../../domain/writes/json-patch';
import { DEFAULT_GEOMETRY_LIMITS, type GeometryLimits } from '../../domain/writes/geometry-limits';
import { findCommand, recordCommand, recordResult, type LoggedCommand } from '../../db/commands/command-log';
import { isRetryableDbError, translateDbError } from '../../db/commands/db-errors';
import { readOperation, type ReadSettings } from '../../db/query/read-operation';
import { withTransactionReadTimeout } from '../../db/query/read-timeout';
import type { Logger } from '../../infra/logger';
import { commandOfStep, readOfStep, type Created, type CreatedByStep } from './batch-step-resolver';
import { representation, type ResponseBudget } from './response-budget';
import { ReadClock, withinBudgets } from './read-clock';
import {
  AlreadyRecorded,
  HANDLERS,
  MAX_TRANSACTION_ATTEMPTS,
  eventOf,
  replayOf,
  successOf,
  type RunOptions,
  type TestPause,
} from './command-runner';
import type { WriteOrigin } from '../../domain/commands/write-origin';

/**
 * An atomicity group of a `$batch` (DESIGN §12): one command in one transaction. Its requests apply
 * in order on the transaction (a GET in it sees the writes before it); the first that fails rolls
 * everything back and is the group's outcome. On success the events of every write go to the
 * outbox and the result of every request to the command log, in the one closing statement a single
 * command uses, so a redelivered batch finds the group recorded and applies nothing again.
 */

type Success = Extract<CommandResult, { ok: true }>;

/** What the log keeps of each request of a group: a write's result, or that it was a read. */
export type GroupStepResult = Success | { ok: true; read: true };

export type GroupResult = { ok: true; steps: GroupStepResult[] } | { ok: false; failedStep: number; failure: Failure };

export interface GroupCommand {
  /** The group's id in the command log: `<batch command id>/<unit index>`. */
  commandId: string;
  batch: Pick<BatchCommand, 'subject' | 'issuedAt' | 'origin'>;
  requestHash?: string;
  steps: readonly BatchStep[];
  /** Entities created by earlier units of the batch. */
  created: CreatedByStep;
  /** What is left of MAX_RESPONSE_BYTES for the batch's reads (the batch spends it on the answers). */
  budget: ResponseBudget;
  /** What is left of the batch's read time (BATCH_READ_TIMEOUT_MS). */
  readClock: ReadClock;
}

export interface GroupOutcome {
  result: GroupResult;
  /** Each request's answer, when this run applied the group (a replay rebuilds them). */
  answers?: Answer[];
  /** Entities the group created, by request id. */
  created: Map<string, Created>;
}

export interface GroupRunnerDeps {
  knex: Knex;
  logger: Logger;
  readSettings: ReadSettings;
  /** BATCH_GROUP_READ_TIMEOUT_MS: the time the GETs of one group's transaction may take, locks held. */
  groupReadTimeoutMs: number;
  onCommitted(events: DomainEvent[], origin: WriteOrigin | undefined): void;
  testPause?: TestPause;
  patchLimits?: PatchLimits;
  geometryLimits?: GeometryLimits;
}

/** Thrown inside the transaction: request `index` failed, so the group rolls back. */
class StepFailed extends Error {
  constructor(
    readonly index: number,
    readonly failure: DomainError,
  ) {
    super(failure.message);
  }
}

interface Applied {
  /** This attempt's own copy of the batch's response budget. */
  budget: ResponseBudget;
  /** This attempt's read time: its transaction holds the group's locks while its GETs run. */
  readClock?: ReadClock;
  steps: GroupStepResult[];
  answers: Answer[];
  events: DomainEvent[];
  created: Map<string, Created>;
}

function loggedOf(group: GroupCommand): LoggedCommand {
  return {
    commandId: group.commandId,
    name: 'group',
    entity: '$batch',
    subject: group.batch.subject,
    ...(group.batch.origin === undefined ? {} : { origin: group.batch.origin }),
    ...(group.requestHash === undefined ? {} : { requestHash: group.requestHash }),
  };
}

/** The entities a recorded group created (to resolve the references of later units). */
export function createdByGroup(steps: readonly BatchStep[], results: readonly GroupStepResult[]): Map<string, Created> {
  const created = new Map<string, Created>();
  steps.forEach((step, i) => {
    const result = results[i];
    if (step.write?.name === 'create' && result && 'dbId' in result) {
      created.set(step.id, { entity: result.entity, dbId: result.dbId, encodedId: result.encodedId });
    }
  });
  return created;
}

export function createGroupRunner(deps: GroupRunnerDeps) {
  const patchLimits = deps.patchLimits ?? DEFAULT_PATCH_LIMITS;
  const geometryLimits = deps.geometryLimits ?? DEFAULT_GEOMETRY_LIMITS;

  async function applyStep(
    trx: Knex.Transaction,
    group: GroupCommand,
    step: BatchStep,
    created: Map<string, Created>,
    applied: Applied,
  ): Promise<void> {
    if (step.read) {
      applied.readClock ??= new ReadClock(deps.groupReadTimeoutMs, 'BATCH_GROUP_READ_TIMEOUT_MS');
      const answer = await withinBudgets(
        [group.readClock, applied.readClock],
        deps.readSettings.timeoutMs,
        (timeoutMs) =>
          readOperation((read) => withTransactionReadTimeout(trx, timeoutMs, read), readOfStep(step, created), {
            ...deps.readSettings,
            timeoutMs,
            budget: applied.budget.next(),
          }),
      );
      applied.budget.spend(answer);
      applied.answers.push(answer);
      applied.steps.push({ ok: true, read: true });
      return;
    }
    const command = commandOfStep(group.batch, step, group.commandId, created);
    const entity = entityByName(command.entity);
    let result: Success;
    try {
      const done = await HANDLERS[command.name]({ trx, command, entity, patchLimits, geometryLimits });
      result = successOf(entity, done);
      applied.events.push(eventOf(command, entity, done));
    } catch (err) {
      if (err instanceof DomainError) throw err;
      const failure = translateDbError(err, entity);
      if (failure) throw failure;
      throw err;
    }
    if (command.name === 'create') {
      created.set(step.id, { entity: entity.name, dbId: result.dbId, encodedId: result.encodedId });
    }
    const row =
      step.write!.representation && command.name !== 'delete'
        ? await representation(trx, entity, result.dbId, applied.budget)
        : null;
    const answer = writeAnswer(step.method as WriteMethod, result, row);
    applied.budget.spend(answer);
    applied.answers.push(answer);
    applied.steps.push(result);
  }

  /**
   * A group made only of POSTs of types that need no per-row locking or placing, set-based
   * (db/commands/bulk-create.ts): one statement per table instead of several per request. Null
   * when the group is not such a group; a failure here is retried request by request.
   */
  async function applyBulk(trx: Knex.Transaction, group: GroupCommand): Promise<Applied | null> {
    const entities = group.steps.map((step) =>
      step.write?.name === 'create' ? entityByName(step.write.entity) : undefined,
    );
    if (!entities.every((entity) => entity !== undefined && bulkCreatable(entity))) return null;
    const counts = new Map<EntityDefinition, number>();
    for (const entity of entities as EntityDefinition[]) counts.set(entity, (counts.get(entity) ?? 0) + 1);
    const keys = await takeKeys(trx, counts);
    const created = new Map(group.created);
    const next = new Map<string, number>();
    const ids = (entities as EntityDefinition[]).map((entity, i) => {
      const n = next.get(entity.name) ?? 0;
      next.set(entity.name, n + 1);
      const id = keys.get(entity.name)![n]!;
      created.set(group.steps[i]!.id, { entity: entity.name, dbId: id, encodedId: encodeId(entity.name, id) });
      return id;
    });
    // Every key is known now, so every reference within the group resolves before anything is written.
    const commands = group.steps.map((step) => commandOfStep(group.batch, step, group.commandId, created));
    const creates = commands.map((command, i) => {
      const entity = entities[i]!;
      // Not validated again: the API validated this canonical body and signed it (its references
      // now hold Ids encodeId made). Request by request, a handler validates again anyway.
      return { entity, id: ids[i]!, body: command.body as WriteBody };
    });
    const written = await createAll(trx, creates);
    if (!written) return null;
    const applied: Applied = { budget: group.budget.copy(), steps: [], answers: [], events: [], created: new Map() };
    for (const [i, step] of group.steps.entries()) {
      const entity = entities[i]!;
      const done = { dbId: written[i]!.id, verb: 'Created' as const, ...written[i]! };
      const result = successOf(entity, done);
      applied.events.push(eventOf(commands[i]!, entity, done));
      const row = step.write!.representation ? await representation(trx, entity, result.dbId, applied.budget) : null;
      const answer = writeAnswer('POST', result, row);
      applied.budget.spend(answer);
      applied.answers.push(answer);
      applied.steps.push(result);
    }
    return applied;
  }

  async function applySteps(trx: Knex.Transaction, group: GroupCommand): Promise<Applied> {
    const created = new Map(group.created);
    const applied: Applied = { budget: group.budget.copy(), steps: [], answers: [], events: [], created: new Map() };
    for (const [index, step] of group.steps.entries()) {
      try {
        await applyStep(trx, group, step, created, applied);
      } catch (err) {
        if (err instanceof DomainError) throw new StepFailed(index, err);
        throw err;
      }
    }
    return applied;
  }

  async function applyOnce(
    trx: Knex.Transaction,
    group: GroupCommand,
    bulk: boolean,
    logger: Logger,
  ): Promise<Applied> {
    const applied = (bulk ? await applyBulk(trx, group) : null) ?? (await applySteps(trx, group));
    const result: GroupResult = { ok: true, steps: applied.steps };
    if (!(await recordCommand(trx, loggedOf(group), result, applied.events))) throw new AlreadyRecorded();
    if (deps.testPause?.at === 'before-commit') {
      logger.warn({ commandId: group.commandId, ms: deps.testPause.ms }, 'test pause (group)');
      await sleep(deps.testPause.ms);
    }
    applied.created = createdByGroup(group.steps, applied.steps);
    return applied;
  }

  async function recorded(group: GroupCommand): Promise<GroupOutcome | null> {
    const earlier = await findCommand<GroupResult>(deps.knex, group.commandId);
    return earlier ? outcomeOfRecord(group, replayOf(earlier, group)) : null;
  }

  function outcomeOfRecord(group: GroupCommand, result: GroupResult | CommandResult): GroupOutcome {
    // A key reused for another batch replays as the conflict of a single command.
    const asGroup: GroupResult =
      'steps' in result || 'failedStep' in result
        ? result
        : { ok: false, failedStep: 0, failure: (result as Extract<CommandResult, { ok: false }>).failure };
    return { result: asGroup, created: asGroup.ok ? createdByGroup(group.steps, asGroup.steps) : new Map() };
  }

  async function recordFailed(group: GroupCommand, index: number, error: DomainError): Promise<GroupOutcome> {
    // Messages may quote what the client sent: whatever it was, the record must be storable.
    const failure = error.toFailure();
    const result: GroupResult = {
      ok: false,
      failedStep: index,
      failure: { ...failure, errors: failure.errors.map(storableText) },
    };
    const earlier = await recordResult(deps.knex, loggedOf(group), result);
    return earlier ? outcomeOfRecord(group, replayOf(earlier, group)) : { result, created: new Map() };
  }

  return async function runGroup(group: GroupCommand, options: RunOptions = {}): Promise<GroupOutcome> {
    const logger = options.logger ?? deps.logger;
    if (options.redelivered || group.requestHash) {
      const replay = await recorded(group);
      if (replay) return replay;
    }
    let bulk = true;
    for (let attempt = 1; ; attempt++) {
      try {
        const applied = await Model.transaction(deps.knex, (trx) => applyOnce(trx, group, bulk, logger));
        if (applied.events.length) deps.onCommitted(applied.events, group.batch.origin);
        return { result: { ok: true, steps: applied.steps }, answers: applied.answers, created: applied.created };
      } catch (err) {
        if (err instanceof AlreadyRecorded) {
          const replay = await recorded(group);
          if (!replay) throw new Error(`group ${group.commandId} was recorded and then vanished`, { cause: err });
          return replay;
        }
        if (bulk && !isRetryableDbError(err)) {
          // Set-based, a failure names no request: request by request names it exactly.
          logger.debug({ commandId: group.commandId, err: (err as Error).message }, 'group again request by request');
          bulk = false;
          attempt--;
          continue;
        }
        if (err instanceof StepFailed) return recordFailed(group, err.index, err.failure);
        if (isRetryableDbError(err) && attempt < MAX_TRANSACTION_ATTEMPTS) {
          logger.info({ commandId: group.commandId, attempt }, 'retrying group transaction');
          continue;
        }
        throw err;
      }
    }
  };
}

export type GroupRunner = ReturnType<typeof createGroupRunner>;
