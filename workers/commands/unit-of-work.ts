import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { Model } from 'objection';
import type { Command, CommandResult } from '../../domain/commands/command';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import { DomainError, conflict, type Failure } from '../../domain/errors/domain-error';
import type { DomainEvent } from '../../domain/events/domain-event';
import { storableText } from '../../domain/text/storable-text';
import { IDEMPOTENCY_KEY_REUSED } from '../../domain/writes/command-ids';
import {
  findCommand,
  isRecordedAlready,
  recordCommand,
  recordResult,
  sendRecord,
  type CommandLogEntry,
  type LoggedCommand,
} from '../../db/commands/command-log';
import { isRetryableDbError } from '../../db/commands/db-errors';
import type { Logger } from '../../infra/logger';

/**
 * The exactly-once unit of work (DESIGN §1, §11) of a lone command, a `$batch` atomicity group and a
 * subscription command: its handler calls in order on one Objection transaction, closed by the one
 * statement that records its result in command_log and its events in the outbox. A redelivery
 * (stalled job, Idempotency-Key repeat) finds the recorded result and returns it: up front when the
 * unit may have run before, or at the end, when its command_log insert finds the id taken and
 * everything this delivery did is rolled back. The client's failures (a DomainError) are results
 * too, recorded once and never retried; deadlocks and serialization failures run the transaction
 * again; any other error throws, so BullMQ retries the job.
 */

/** Deadlocks and serialization failures are resolved by running the transaction again. */
export const MAX_TRANSACTION_ATTEMPTS = 3;

/**
 * Test-only: hold a unit open at a point of its life so a test can kill the process there
 * (set by workers/commands/main.ts from COMMAND_TEST_PAUSE_MS / COMMAND_TEST_PAUSE_AT).
 */
export interface TestPause {
  at: 'before-commit' | 'after-commit';
  ms: number;
}

/** What one handler call applied: its value (what the unit's result is made of) and its events. */
export interface Called<V> {
  value: V;
  events: readonly DomainEvent[];
}

/** One handler call, on the unit's transaction; it throws a DomainError for the client's failure. */
export type HandlerCall<V> = (trx: Knex.Transaction) => Promise<Called<V>>;

export interface UnitOfWork<V, R> {
  /** Its command_log record: id, name, entity, subject, request hash and the write's origin. */
  record: LoggedCommand;
  /** This attempt's handler calls, built afresh for each attempt (a call may use what the calls before it applied). */
  calls(): HandlerCall<V>[];
  /**
   * A set-based way to apply every call at once, tried first (null when it does not apply). Any
   * failure of an attempt with it but a retryable one runs the calls instead, without counting.
   */
  shortcut?(trx: Knex.Transaction): Promise<Called<V>[] | null>;
  /** The result recorded when every call succeeded. */
  succeeded(values: V[]): R;
  /** The result recorded when call `index` failed with the client's failure (nothing was applied). */
  failed(failure: Failure, index: number): R;
  /** A database error of the transaction that is the client's failure after all (a race past the checks). */
  translate?(err: unknown): DomainError | null;
}

export interface UnitOptions {
  /** The job ran before (a retry or a stalled job): look for a recorded result first. */
  redelivered?: boolean;
  logger: Logger;
}

export interface UnitOutcome<V, R> {
  /** The recorded result: this delivery's, an earlier one's, or the conflict of a reused Idempotency-Key. */
  result: R | CommandResult;
  /** What each call applied, when this delivery applied the unit (absent on a replay or a failure). */
  values?: V[];
}

export interface UnitOfWorkDeps {
  knex: Knex;
  /** Called after commit with the events just written to the outbox and the write's origin. */
  onCommitted?(events: DomainEvent[], origin: WriteOrigin | undefined): void;
  testPause?: TestPause;
}

/** Thrown inside the transaction to roll it back: an earlier delivery recorded this unit. */
class AlreadyRecorded extends Error {}

/** The recorded result of an earlier delivery; a key reused for another request is a conflict. */
export function replayOf<R>(
  entry: CommandLogEntry<R>,
  command: Pick<Command, 'commandId' | 'requestHash'>,
): R | CommandResult {
  if ((entry.requestHash ?? null) !== (command.requestHash ?? null)) {
    return {
      ok: false,
      failure: conflict([IDEMPOTENCY_KEY_REUSED]).toFailure(),
    };
  }
  if (!entry.result) throw new Error(`command ${command.commandId} is logged without a result`);
  return entry.result;
}

/** Messages may quote what the client sent: whatever it was, the record must be storable. */
function storableFailure(error: DomainError): Failure {
  const failure = error.toFailure();
  return { ...failure, errors: failure.errors.map(storableText) };
}

/** Holds a unit at `at` when the test pause names that point (a group of commands too: group-commit.ts). */
export async function testPauseAt(
  testPause: TestPause | undefined,
  at: TestPause['at'],
  commandId: string,
  logger: Logger,
): Promise<void> {
  if (testPause?.at !== at) return;
  logger.warn({ commandId, at, ms: testPause.ms }, 'test pause');
  await sleep(testPause.ms);
}

export function createUnitOfWork(deps: UnitOfWorkDeps) {
  const pause = (at: TestPause['at'], commandId: string, logger: Logger) =>
    testPauseAt(deps.testPause, at, commandId, logger);

  async function recorded<R>(unit: UnitOfWork<unknown, R>): Promise<R | CommandResult | null> {
    const earlier = await findCommand<R>(deps.knex, unit.record.commandId);
    return earlier ? replayOf(earlier, unit.record) : null;
  }

  return async function runUnit<V, R>(unit: UnitOfWork<V, R>, options: UnitOptions): Promise<UnitOutcome<V, R>> {
    const { record } = unit;
    const { logger } = options;
    // Repeats are expected here; a first delivery skips the lookup (the final insert still guards).
    if (options.redelivered || record.requestHash) {
      const replay = await recorded(unit);
      if (replay) return { result: replay };
    }
    let shortcut = unit.shortcut !== undefined;
    for (let attempt = 1; ; attempt++) {
      /** The call running, for a failure to name (the last one when recording failed). */
      let at = 0;
      try {
        const applied = await Model.transaction(deps.knex, async (trx) => {
          let called = shortcut ? await unit.shortcut!(trx) : null;
          if (!called) {
            called = [];
            for (const [index, call] of unit.calls().entries()) {
              at = index;
              called.push(await call(trx));
            }
          }
          const values = called.map((c) => c.value);
          const events = called.flatMap((c) => c.events);
          const result = unit.succeeded(values);
          if (deps.testPause?.at === 'before-commit') {
            // Recorded and waited for, so a test can kill the process with everything written but not committed.
            if (!(await recordCommand(trx, record, result, events))) throw new AlreadyRecorded();
            await pause('before-commit', record.commandId, logger);
            return { result, values, events, recorded: null };
          }
          // The record goes out with the COMMIT knex issues next (db/pipelined-pg.ts); its answer says
          // whether that COMMIT committed or, the transaction having failed, rolled back.
          return { result, values, events, recorded: await sendRecord(trx, record, result, events) };
        });
        if (applied.recorded) {
          await applied.recorded.answer.catch((err: unknown) => {
            throw isRecordedAlready(err) ? new AlreadyRecorded() : err;
          });
        }
        if (applied.events.length) deps.onCommitted?.(applied.events, record.origin);
        await pause('after-commit', record.commandId, logger);
        return { result: applied.result, values: applied.values };
      } catch (err) {
        if (err instanceof AlreadyRecorded) {
          const replay = await recorded(unit);
          if (!replay) throw new Error(`command ${record.commandId} was recorded and then vanished`, { cause: err });
          return { result: replay };
        }
        if (shortcut && !isRetryableDbError(err)) {
          // Set-based, a failure names no call: call by call names it exactly.
          logger.debug({ commandId: record.commandId, err: (err as Error).message }, 'again call by call');
          shortcut = false;
          attempt--;
          continue;
        }
        const failure = err instanceof DomainError ? err : (unit.translate?.(err) ?? null);
        if (failure) {
          const result = unit.failed(storableFailure(failure), at);
          const earlier = await recordResult(deps.knex, record, result);
          return { result: earlier ? replayOf(earlier, record) : result };
        }
        if (isRetryableDbError(err) && attempt < MAX_TRANSACTION_ATTEMPTS) {
          logger.info(
            { commandId: record.commandId, attempt, code: (err as { code?: string }).code },
            'retrying transaction',
          );
          continue;
        }
        throw err;
      }
    }
  };
}
