import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import {
  isBatchResult,
  recordedBatch,
  type BatchCommand,
  type BatchEntry,
  type BatchResult,
  type BatchStep,
  type RecordedBatch,
} from '../../domain/batch/batch-command';
import { findCommand, recordResult } from '../../db/commands/command-log';
import type { CommandResult } from '../../domain/commands/command';
import { DomainError, failedDependency, type Failure } from '../../domain/errors/domain-error';
import { failedResult, type RequestResult } from '../../domain/results/request-result';
import { onPool, type ReadSettings } from '../../db/query/read-operation';
import { commandOfStep, readStep, type Created, type CreatedByStep } from './batch-step-resolver';
import { ResponseBudget, writtenOf } from './response-budget';
import { ReadClock, withinBudgets } from './read-clock';
import { walPositionNow } from '../../db/replicas/wal-position';
import type { BatchJournal } from './batch-journal';
import type { CommandRunner, RunOptions } from './command-runner';
import { replayOf } from './unit-of-work';
import type { GroupRunner, GroupStepResult } from './group-runner';

/**
 * Runs a `$batch` job (DESIGN §12): its units one after the other — an atomicity group through the
 * group runner (one command, one transaction), a write outside groups as its own command, a GET on
 * Postgres — and records every request's result (the API renders the response from them,
 * api/http/batch-answer.ts). Each unit is logged under `<batch id>/<unit index>`, so a batch run
 * again (a retry, a job recovered from a dead worker) replays the units that committed and applies
 * only the rest. A request whose dependency failed comes to a FailedDependency (424) unrun.
 */

export interface BatchRunnerDeps {
  knex: Knex;
  /** Pool of the batch's GETs outside groups (they carry STATEMENT_TIMEOUT_MS). */
  readKnex: Knex;
  journal: BatchJournal;
  runCommand: CommandRunner;
  runGroup: GroupRunner;
  readSettings: ReadSettings;
  /** BATCH_READ_TIMEOUT_MS: the time all GETs of a batch may take. */
  readTimeoutMs: number;
}

export interface BatchRunOptions extends RunOptions {
  /** Told the units done (at most once a second, and at the end). */
  onProgress?(progress: { units: number; done: number }): void;
}

/** How often a batch reports its progress. */
const PROGRESS_INTERVAL_MS = 1000;

/** Consecutive steps of one atomicity group, or one step outside groups. */
interface Unit {
  index: number;
  steps: BatchStep[];
  grouped: boolean;
}

function unitsOf(steps: readonly BatchStep[]): Unit[] {
  const units: Unit[] = [];
  for (const step of steps) {
    const last = units.at(-1);
    if (step.atomicityGroup !== undefined && last?.grouped && last.steps[0]!.atomicityGroup === step.atomicityGroup) {
      last.steps.push(step);
    } else units.push({ index: units.length, steps: [step], grouped: step.atomicityGroup !== undefined });
  }
  return units;
}

/** A unit's own fingerprint under an idempotent batch: another batch under the same key conflicts. */
function unitHash(batch: BatchCommand, unit: Unit): string | undefined {
  return batch.requestHash && createHash('sha256').update(`${batch.requestHash}\n${unit.index}`).digest('hex');
}

function failedDependencyResult(message: string): RequestResult {
  return failedResult(failedDependency(message).toFailure());
}

/** The job's result: the response stays in the command log (RecordedBatch), out of the queue. */
function finished(result: RecordedBatch | CommandResult): BatchResult | CommandResult {
  return isBatchResult(result) ? { ok: true, batch: true } : result;
}

export function createBatchRunner(deps: BatchRunnerDeps) {
  const pool = onPool(deps.readKnex, deps.readSettings.timeoutMs);

  /** A step's result, a domain failure included; anything else is the job's failure. */
  async function resulting(work: () => Promise<RequestResult>): Promise<RequestResult> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof DomainError) return failedResult(err.toFailure());
      throw err;
    }
  }

  const writtenResultOf = (step: BatchStep, result: Extract<CommandResult, { ok: true }>, budget: ResponseBudget) =>
    writtenOf(deps.knex, step.write!, result, budget);

  /** A GET outside groups, under STATEMENT_TIMEOUT_MS and what the batch's read time has left. */
  const read = (step: BatchStep, created: CreatedByStep, budget: ResponseBudget, clock: ReadClock) =>
    resulting(() =>
      withinBudgets([clock], deps.readSettings.timeoutMs, (timeoutMs) =>
        readStep(timeoutMs === deps.readSettings.timeoutMs ? pool : onPool(deps.readKnex, timeoutMs), step, created, {
          ...deps.readSettings,
          timeoutMs,
          budget: budget.next(),
        }),
      ),
    );

  return async function runBatch(
    batch: BatchCommand,
    options: BatchRunOptions = {},
  ): Promise<BatchResult | CommandResult> {
    const logged = {
      commandId: batch.commandId,
      name: 'batch',
      entity: '$batch',
      subject: batch.subject,
      requestHash: batch.requestHash,
    };
    if (options.redelivered || batch.requestHash) {
      // Finished before (a repeated Idempotency-Key, a job run again): its response stands.
      const earlier = await findCommand<RecordedBatch>(deps.knex, batch.commandId);
      if (earlier) return finished(replayOf(earlier, batch));
    }
    // A batch run again answers its finished units as they came out then (batch-journal.ts).
    const journaled = options.redelivered
      ? await deps.journal.load(batch.commandId)
      : new Map<number, RequestResult[]>();
    /** Failed requests by id, and each group with a failed request by its name: the request to name. */
    const failed = new Map<string, string>();
    const created = new Map<string, Created>();
    const results: BatchEntry[] = [];
    const budget = new ResponseBudget(deps.readSettings.budget.maxResponseBytes ?? Number.MAX_SAFE_INTEGER);
    const readClock = new ReadClock(deps.readTimeoutMs, 'BATCH_READ_TIMEOUT_MS');
    const settle = (step: BatchStep, result: RequestResult) => {
      budget.spend(result);
      if (result.kind === 'failed') {
        failed.set(step.id, step.id);
        if (step.atomicityGroup !== undefined && !failed.has(step.atomicityGroup))
          failed.set(step.atomicityGroup, step.id);
      }
      results.push({ id: step.id, result });
    };
    /** The first failed request a step depends on (outside its own group), named or in a named group. */
    const failedDependencyOf = (step: BatchStep) =>
      step.dependsOn.map((name) => failed.get(name)).find((id) => id !== undefined);

    const units = unitsOf(batch.steps);
    let reported = Date.now();
    for (const unit of units) {
      if (options.onProgress && Date.now() - reported >= PROGRESS_INTERVAL_MS) {
        options.onProgress({ units: units.length, done: unit.index });
        reported = Date.now();
      }
      const unitId = `${batch.commandId}/${unit.index}`;
      const blocked = unit.steps.map(failedDependencyOf).find((id) => id !== undefined);
      if (blocked !== undefined) {
        for (const step of unit.steps) {
          settle(step, failedDependencyResult(`Request '${blocked}' failed, so '${step.id}' was not run.`));
        }
        continue;
      }
      const first = results.length;
      if (unit.grouped) await runGroupUnit(unit, unitId, journaled.get(unit.index));
      else await runLone(unit.steps[0]!, unitId, unitHash(batch, unit), journaled.get(unit.index)?.[0]);
      if (!journaled.has(unit.index) && unit.index < units.length - 1) {
        await deps.journal.append(
          batch.commandId,
          unit.index,
          results.slice(first).map((entry) => entry.result),
          options.logger,
        );
      }
    }
    options.onProgress?.({ units: units.length, done: units.length });
    // Every write that succeeded is answered with X-Consistency-Token (DESIGN §14): one position
    // read after the last commit, so it covers every write of the batch.
    const written = batch.consistencyTokens && results.some(({ result }) => result.kind === 'written');
    const recorded = recordedBatch(results, written ? await walPositionNow(deps.knex) : undefined);
    const earlier = await recordResult(deps.knex, logged, recorded);
    await deps.journal.clear(batch.commandId, options.logger);
    return finished(earlier ? replayOf(earlier, batch) : recorded);

    async function runLone(
      step: BatchStep,
      unitId: string,
      requestHash: string | undefined,
      before: RequestResult | undefined,
    ): Promise<void> {
      if (step.failure) return settle(step, failedResult(step.failure));
      if (step.read) return settle(step, before ?? (await read(step, created, budget, readClock)));
      const result = await resulting(async () => {
        const command = { ...commandOfStep(batch, step, unitId, created), ...(requestHash ? { requestHash } : {}) };
        const outcome = await deps.runCommand(command, options);
        if (!outcome.ok) return failedResult(outcome.failure);
        if (command.name === 'create') {
          created.set(step.id, { entity: outcome.entity, dbId: outcome.dbId, encodedId: outcome.encodedId });
        }
        return before ?? writtenResultOf(step, outcome, budget);
      });
      settle(step, result);
    }

    async function runGroupUnit(unit: Unit, unitId: string, before: RequestResult[] | undefined): Promise<void> {
      const refused = unit.steps.findIndex((step) => step.failure);
      if (refused >= 0) return settleFailedGroup(unit, refused, unit.steps[refused]!.failure!);
      const outcome = await deps.runGroup(
        { commandId: unitId, batch, requestHash: unitHash(batch, unit), steps: unit.steps, created, budget, readClock },
        options,
      );
      if (!outcome.result.ok) return settleFailedGroup(unit, outcome.result.failedStep, outcome.result.failure);
      for (const [id, entity] of outcome.created) created.set(id, entity);
      if (outcome.results) {
        unit.steps.forEach((step, i) => settle(step, outcome.results![i]!));
        return;
      }
      if (before?.length === unit.steps.length) {
        unit.steps.forEach((step, i) => settle(step, before[i]!));
        return;
      }
      // Replayed from the log with no journal: results rebuilt from the logged ones, reads made again.
      const logged = outcome.result.steps;
      for (const [i, step] of unit.steps.entries()) {
        const result = logged[i] as GroupStepResult;
        settle(
          step,
          'read' in result ? await read(step, created, budget, readClock) : await writtenResultOf(step, result, budget),
        );
      }
    }

    function settleFailedGroup(unit: Unit, index: number, failure: Failure): void {
      const culprit = unit.steps[index]!;
      unit.steps.forEach((step, i) =>
        settle(
          step,
          i === index
            ? failedResult(failure)
            : failedDependencyResult(
                `Request '${culprit.id}' of atomicity group '${culprit.atomicityGroup}' failed, so nothing of the group was applied.`,
              ),
        ),
      );
    }
  };
}
