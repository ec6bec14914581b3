import type { Knex } from 'knex';
import type { BatchCommand, BatchStep } from '../../domain/batch/batch-command';
import type { CommandResult } from '../../domain/commands/command';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { encodeId } from '../../domain/ids/id-codec';
import type { WriteBody } from '../../domain/validation/write-body';
import { bulkCreatable, createAll, takeKeys } from '../../db/commands/bulk-create';
import type { Failure } from '../../domain/errors/domain-error';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { RequestResult } from '../../domain/results/request-result';
import { DEFAULT_PATCH_LIMITS, type PatchLimits } from '../../domain/writes/json-patch';
import { DEFAULT_GEOMETRY_LIMITS, type GeometryLimits } from '../../domain/writes/geometry-limits';
import type { LoggedCommand } from '../../db/commands/command-log';
import type { ReadSettings } from '../../db/query/read-operation';
import { withTransactionReadTimeout } from '../../db/query/read-timeout';
import type { Logger } from '../../infra/logger';
import { commandOfStep, readStep, type Created, type CreatedByStep } from './batch-step-resolver';
import { writtenOf, type ResponseBudget } from './response-budget';
import { ReadClock, withinBudgets } from './read-clock';
import { commandCall, eventOf, successOf, type RunOptions } from './command-runner';
import { createUnitOfWork, type Called, type HandlerCall, type TestPause } from './unit-of-work';
import type { WriteOrigin } from '../../domain/commands/write-origin';

/**
 * An atomicity group of a `$batch` (DESIGN §12): one unit of work (unit-of-work.ts) with one handler
 * call per request, as a lone command is one with one call. Its requests apply in order on the
 * transaction (a GET in it sees the writes before it); the first that fails rolls everything back
 * and is the group's outcome. On success the events of every write go to the outbox and the result
 * of every request to the command log, in the one closing statement a single command uses, so a
 * redelivered batch finds the group recorded and applies nothing again.
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
  /** What is left of MAX_RESPONSE_BYTES for the batch's reads (the batch spends it on its results' bodies). */
  budget: ResponseBudget;
  /** What is left of the batch's read time (BATCH_READ_TIMEOUT_MS). */
  readClock: ReadClock;
}

export interface GroupOutcome {
  result: GroupResult;
  /** Each request's result, when this run applied the group (a replay rebuilds them). */
  results?: RequestResult[];
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

/** What one attempt at the group shares between its requests. */
interface Attempt {
  /** This attempt's own copy of the batch's response budget. */
  budget: ResponseBudget;
  /** This attempt's read time: its transaction holds the group's locks while its GETs run. */
  readClock?: ReadClock;
  /** Entities created by earlier units and by this attempt's requests so far. */
  created: Map<string, Created>;
}

/** What a request of the group did: what the log keeps of it, and what it came to. */
interface StepDone {
  logged: GroupStepResult;
  result: RequestResult;
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
  const runUnit = createUnitOfWork(deps);
  const limits = {
    patchLimits: deps.patchLimits ?? DEFAULT_PATCH_LIMITS,
    geometryLimits: deps.geometryLimits ?? DEFAULT_GEOMETRY_LIMITS,
  };

  async function applyStep(
    trx: Knex.Transaction,
    group: GroupCommand,
    step: BatchStep,
    attempt: Attempt,
  ): Promise<Called<StepDone>> {
    if (step.read) {
      attempt.readClock ??= new ReadClock(deps.groupReadTimeoutMs, 'BATCH_GROUP_READ_TIMEOUT_MS');
      const read = await withinBudgets([group.readClock, attempt.readClock], deps.readSettings.timeoutMs, (timeoutMs) =>
        readStep((read) => withTransactionReadTimeout(trx, timeoutMs, read), step, attempt.created, {
          ...deps.readSettings,
          timeoutMs,
          budget: attempt.budget.next(),
        }),
      );
      attempt.budget.spend(read);
      return { value: { logged: { ok: true, read: true }, result: read }, events: [] };
    }
    // The request's command, through the handler call a lone command runs (command-runner.ts).
    const command = commandOfStep(group.batch, step, group.commandId, attempt.created);
    const { value: result, events } = await commandCall(command, limits)(trx);
    if (command.name === 'create') {
      attempt.created.set(step.id, { entity: result.entity, dbId: result.dbId, encodedId: result.encodedId });
    }
    const written = await writtenOf(trx, step.write!, result, attempt.budget);
    attempt.budget.spend(written);
    return { value: { logged: result, result: written }, events };
  }

  /**
   * A group made only of POSTs of types that need no per-row locking or placing, set-based
   * (db/commands/bulk-create.ts): one statement per table instead of several per request. Null
   * when the group is not such a group; a failure here is retried request by request.
   */
  async function applyBulk(trx: Knex.Transaction, group: GroupCommand): Promise<Called<StepDone>[] | null> {
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
    const budget = group.budget.copy();
    const called: Called<StepDone>[] = [];
    for (const [i, step] of group.steps.entries()) {
      const entity = entities[i]!;
      const done = { dbId: written[i]!.id, verb: 'Created' as const, ...written[i]! };
      const result = successOf(entity, done);
      const outcome = await writtenOf(trx, step.write!, result, budget);
      budget.spend(outcome);
      called.push({ value: { logged: result, result: outcome }, events: [eventOf(commands[i]!, entity, done)] });
    }
    return called;
  }

  /** A recorded result as a group's (a key reused for another batch replays as a single command's conflict). */
  function asGroupResult(result: GroupResult | CommandResult): GroupResult {
    return 'steps' in result || 'failedStep' in result
      ? result
      : { ok: false, failedStep: 0, failure: (result as Extract<CommandResult, { ok: false }>).failure };
  }

  return async function runGroup(group: GroupCommand, options: RunOptions = {}): Promise<GroupOutcome> {
    const outcome = await runUnit<StepDone, GroupResult>(
      {
        record: loggedOf(group),
        calls: () => {
          const attempt: Attempt = { budget: group.budget.copy(), created: new Map(group.created) };
          return group.steps.map(
            (step): HandlerCall<StepDone> =>
              (trx) =>
                applyStep(trx, group, step, attempt),
          );
        },
        shortcut: (trx) => applyBulk(trx, group),
        succeeded: (steps) => ({ ok: true, steps: steps.map((step) => step.logged) }),
        failed: (failure, index) => ({ ok: false, failedStep: index, failure }),
      },
      { redelivered: options.redelivered, logger: options.logger ?? deps.logger },
    );
    const result = asGroupResult(outcome.result);
    return {
      result,
      ...(outcome.values ? { results: outcome.values.map((step) => step.result) } : {}),
      created: result.ok ? createdByGroup(group.steps, result.steps) : new Map(),
    };
  };
}

export type GroupRunner = ReturnType<typeof createGroupRunner>;
