import type { Knex } from 'knex';
import type { CommandResult } from '../../domain/commands/command';
import {
  DomainError,
  conflict,
  notFound,
  preconditionFailed,
  validationFailed,
} from '../../domain/errors/domain-error';
import { encodeId } from '../../domain/ids/id-codec';
import { storableText } from '../../domain/text/storable-text';
import { etagOf, ifMatchAccepts } from '../../domain/writes/entity-version';
import { SUBSCRIPTION_TYPE, validateSubscription, type SubscriptionLimits } from '../../domain/webhooks/subscription';
import { applySubscriptionPatch } from '../../domain/webhooks/subscription-patch';
import type { SubscriptionCommand } from '../../domain/webhooks/subscription-command';
import { generateSecret } from '../../domain/webhooks/signature';
import { findCommand, recordCommand, recordResult, type LoggedCommand } from '../../db/commands/command-log';
import { isRetryableDbError } from '../../db/commands/db-errors';
import {
  countSubscriptions,
  deleteSubscription,
  insertSubscription,
  lockSubscription,
  lockSubscriptionCreates,
  updateSubscription,
  type StoredSubscription,
} from '../../db/webhooks/subscriptions';
import type { Logger } from '../../infra/logger';
import { AlreadyRecorded, MAX_TRANSACTION_ATTEMPTS, replayOf } from './command-runner';

/**
 * Runs a subscription command exactly once (DESIGN §16), as entity commands run: the change and its
 * command_log row in one transaction, a redelivery answered from the log, domain failures recorded
 * as results. No outbox rows: subscriptions emit no domain events. The create command's secret is
 * generated here, inside the transaction, and stored with the row: the API reads it from Postgres
 * for the 201, so it is never in the job, its return value or the log.
 */

export interface SubscriptionRunnerDeps {
  knex: Knex;
  logger: Logger;
  /** WEBHOOK_MAX_SUBSCRIPTIONS. */
  maxSubscriptions: number;
  limits: SubscriptionLimits;
}

type Success = Extract<CommandResult, { ok: true }>;

function success(dbId: number, version: number, deleted = false): Success {
  return {
    ok: true,
    entity: SUBSCRIPTION_TYPE,
    dbId,
    encodedId: encodeId(SUBSCRIPTION_TYPE, dbId),
    version,
    ...(deleted ? { deleted: true } : {}),
  };
}

function logged(command: SubscriptionCommand): LoggedCommand {
  return { ...command, entity: SUBSCRIPTION_TYPE };
}

function keyOf(command: SubscriptionCommand): number {
  if (command.key === undefined) throw new Error(`${command.name} command ${command.commandId} carries no key`);
  return command.key;
}

function missing(key: number) {
  return notFound(`${SUBSCRIPTION_TYPE} '${encodeId(SUBSCRIPTION_TYPE, key)}' does not exist.`);
}

function assertIfMatch(command: SubscriptionCommand, current: StoredSubscription): void {
  if (command.ifMatch === undefined || ifMatchAccepts(command.ifMatch, current.version)) return;
  throw preconditionFailed(
    `${SUBSCRIPTION_TYPE} '${current.body.Id}' has changed: If-Match ${command.ifMatch} does not match its ETag ${etagOf(current.version)}.`,
  );
}

export function createSubscriptionRunner(deps: SubscriptionRunnerDeps) {
  async function apply(trx: Knex.Transaction, command: SubscriptionCommand): Promise<Success> {
    switch (command.name) {
      case 'subscription-create': {
        const checked = validateSubscription(command.body, deps.limits);
        if (!checked.ok) throw validationFailed(checked.errors);
        await lockSubscriptionCreates(trx);
        if ((await countSubscriptions(trx)) >= deps.maxSubscriptions) {
          throw conflict([
            `${SUBSCRIPTION_TYPE}: at most ${deps.maxSubscriptions} subscriptions (WEBHOOK_MAX_SUBSCRIPTIONS); delete one first`,
          ]);
        }
        const row = await insertSubscription(trx, checked.value, generateSecret(), command.subject);
        return success(row.id, row.version);
      }
      case 'subscription-patch': {
        const key = keyOf(command);
        const current = await lockSubscription(trx, key);
        if (!current) throw missing(key);
        assertIfMatch(command, current);
        const patched = applySubscriptionPatch(current.body, command.patch ?? []);
        const checked = validateSubscription(patched, deps.limits);
        if (!checked.ok) throw validationFailed(checked.errors);
        return success(key, await updateSubscription(trx, key, checked.value));
      }
      case 'subscription-delete': {
        const key = keyOf(command);
        const current = await lockSubscription(trx, key);
        if (!current) throw missing(key);
        assertIfMatch(command, current);
        await deleteSubscription(trx, key);
        return success(key, 0, true);
      }
    }
  }

  async function recorded(command: SubscriptionCommand): Promise<CommandResult | null> {
    const earlier = await findCommand(deps.knex, command.commandId);
    return earlier ? replayOf(earlier, command) : null;
  }

  return async function run(
    command: SubscriptionCommand,
    options: { redelivered?: boolean; logger?: Logger } = {},
  ): Promise<CommandResult> {
    const logger = options.logger ?? deps.logger;
    if (options.redelivered) {
      const replay = await recorded(command);
      if (replay) return replay;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await deps.knex.transaction(async (trx) => {
          const result = await apply(trx, command);
          if (!(await recordCommand(trx, logged(command), result, []))) throw new AlreadyRecorded();
          return result;
        });
      } catch (err) {
        if (err instanceof AlreadyRecorded) {
          const replay = await recorded(command);
          if (!replay) throw new Error(`command ${command.commandId} was recorded and then vanished`, { cause: err });
          return replay;
        }
        if (err instanceof DomainError) {
          const failure = err.toFailure();
          const result: CommandResult = {
            ok: false,
            failure: { ...failure, errors: failure.errors.map(storableText) },
          };
          const earlier = await recordResult(deps.knex, logged(command), result);
          return earlier ? replayOf(earlier, command) : result;
        }
        if (isRetryableDbError(err) && attempt < MAX_TRANSACTION_ATTEMPTS) {
          logger.info({ commandId: command.commandId, attempt }, 'retrying subscription transaction');
          continue;
        }
        throw err;
      }
    }
  };
}
