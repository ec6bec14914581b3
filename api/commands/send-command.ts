import type { Request, Response } from 'express';
import type { BatchCommand, BatchResult } from '../../domain/batch/batch-command';
import type { Command, CommandResult } from '../../domain/commands/command';
import { DEFAULT_RETRY_AFTER_SECONDS, unavailable } from '../../domain/errors/domain-error';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import { tracing } from '../../infra/tracing/tracing';
import type { SubscriptionCommand } from '../../domain/webhooks/subscription-command';
import { QueueUnavailableError, type CommandBus, type Dispatched } from './command-bus';
import { BATCH_NOT_FINISHED, COMMAND_NOT_APPLIED, commandLocation, commandStateOf } from './command-state';

/**
 * Sends a command or a batch and waits for its outcome until `timeoutMs`. Answers 202 +
 * `/Commands/<id>` itself when it is still running then; throws 503 when the queue failed or the
 * job failed (never the client's doing); returns the finished result otherwise. The command carries
 * the request's id and, with tracing on, its trace context (signed with the rest), so the workers'
 * log lines name the request and their spans join its trace.
 */
export async function sendCommand<R extends CommandResult | BatchResult>(
  req: Request,
  res: Response,
  commandBus: CommandBus,
  sent: Command | BatchCommand | SubscriptionCommand,
  timeoutMs: number,
): Promise<R | undefined> {
  const origin: WriteOrigin = { requestId: req.id, ...tracing().activeContext() };
  const command = { ...sent, origin };
  let dispatched: Dispatched<CommandResult | BatchResult>;
  try {
    dispatched = await (command.name === 'batch'
      ? commandBus.dispatch(command, timeoutMs)
      : commandBus.dispatch(command as Command, timeoutMs));
  } catch (err) {
    if (!(err instanceof QueueUnavailableError)) throw err;
    req.log.warn(
      { commandId: command.commandId, maybeQueued: err.maybeQueued, err: (err.cause as Error)?.message },
      'command not enqueued',
    );
    if (!err.maybeQueued) throw unavailable('The command queue is unavailable; nothing was changed.');
    // The job may have reached Redis before the connection failed: say so, and where to look.
    const outcomeAt = commandLocation(command.commandId);
    throw unavailable(
      `The command queue became unreachable while the command was being queued; it may still be applied. Its outcome will be at ${outcomeAt} once the queue is back.`,
      DEFAULT_RETRY_AFTER_SECONDS,
      outcomeAt,
    );
  }
  switch (dispatched.state) {
    case 'pending':
      res.status(202).location(commandLocation(command.commandId)).json(commandStateOf(command.commandId, dispatched));
      return undefined;
    case 'failed':
      // Never the client's doing (domain failures are results): a store or a worker failed.
      req.log.warn({ commandId: command.commandId, reason: dispatched.reason }, 'command failed');
      if (command.name === 'batch') throw unavailable(BATCH_NOT_FINISHED);
      throw unavailable(
        command.requestHash
          ? `${COMMAND_NOT_APPLIED.slice(0, -1)} (with the same Idempotency-Key).`
          : COMMAND_NOT_APPLIED,
      );
    case 'finished':
      return dispatched.result as R;
  }
}
