import type { Knex } from 'knex';
import type { CommandResult } from '../../domain/commands/command';
import { conflict, notFound, preconditionFailed, validationFailed } from '../../domain/errors/domain-error';
import { encodeId } from '../../domain/ids/id-codec';
import { etagOf, ifMatchAccepts } from '../../domain/writes/entity-version';
import { SUBSCRIPTION_TYPE, validateSubscription, type SubscriptionLimits } from '../../domain/webhooks/subscription';
import { applySubscriptionPatch } from '../../domain/webhooks/subscription-patch';
import type { SubscriptionCommand } from '../../domain/webhooks/subscription-command';
import { generateSecret } from '../../domain/webhooks/signature';
import type { LoggedCommand } from '../../db/commands/command-log';
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
import { createUnitOfWork } from './unit-of-work';

/**
 * Runs a subscription command exactly once (DESIGN §16), as entity commands run: a unit of work
 * (unit-of-work.ts) of one call, the change, and its command_log row in one transaction. No outbox
 * rows: subscriptions emit no domain events. The create command's secret is generated here, inside
 * the transaction, and stored with the row: the API reads it from Postgres for the 201, so it is
 * never in the job, its return value or the log.
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

  const runUnit = createUnitOfWork(deps);

  return async function run(
    command: SubscriptionCommand,
    options: { redelivered?: boolean; logger?: Logger } = {},
  ): Promise<CommandResult> {
    const outcome = await runUnit<Success, CommandResult>(
      {
        record: logged(command),
        calls: () => [async (trx) => ({ value: await apply(trx, command), events: [] })],
        succeeded: ([result]) => result!,
        failed: (failure) => ({ ok: false, failure }),
      },
      { redelivered: options.redelivered, logger: options.logger ?? deps.logger },
    );
    return outcome.result;
  };
}
