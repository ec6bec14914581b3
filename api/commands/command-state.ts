import { entityLocation } from '../http/answer';
import { batchResponseText } from '../http/batch-answer';
import { problemFor, type ProblemBody } from '../http/problem-status';
import type { Dispatched } from './command-bus';
import type { CommandResult } from '../../domain/commands/command';
import {
  isBatchResult,
  type BatchResult,
  type LegacyRecordedBatch,
  type RecordedBatch,
} from '../../domain/batch/batch-command';
import { SUBSCRIPTION_TYPE, subscriptionLocation } from '../../domain/webhooks/subscription';

/** The body of `GET /Commands/<id>` (DESIGN §10). */
export interface CommandStateBody {
  Id: string;
  State: 'Pending' | 'Succeeded' | 'Failed';
  Location?: string;
  Problem?: ProblemBody;
  /** A `$batch`'s response (DESIGN §12), once it has finished. */
  Response?: unknown;
}

/** What a command whose job failed answers (503): nothing applied, send it again. */
export const COMMAND_NOT_APPLIED =
  'The command could not be applied because a data store or worker failed while it ran; nothing was changed. Send the request again.';

/**
 * What a batch whose job failed answers (503): the units before the failure may have committed, and
 * only the same batch under the same Idempotency-Key finishes it without applying them twice.
 */
export const BATCH_NOT_FINISHED =
  'The batch could not be finished because a data store or worker failed while it ran; requests before the failure may have been applied. Send the same batch again with the same Idempotency-Key to finish it without applying anything twice.';

export function commandLocation(commandId: string): string {
  return `/Commands/${commandId}`;
}

export function commandStateOf(
  commandId: string,
  dispatched: Dispatched<CommandResult | BatchResult>,
  batch = false,
): CommandStateBody {
  switch (dispatched.state) {
    case 'pending':
      return { Id: commandId, State: 'Pending' };
    case 'failed':
      // Not the client's doing: a store or worker failed. Nothing was applied; a repeat runs it.
      return {
        Id: commandId,
        State: 'Failed',
        Problem: problemFor('Unavailable', [batch ? BATCH_NOT_FINISHED : COMMAND_NOT_APPLIED]),
      };
    case 'finished': {
      const result = dispatched.result;
      if (isBatchResult(result)) {
        // Read from the command log, where the batch's results are kept (RecordedBatch); the job
        // itself keeps a stub without them.
        const recorded = result as Partial<RecordedBatch & LegacyRecordedBatch>;
        const response =
          recorded.results || recorded.responses
            ? JSON.parse(batchResponseText(recorded as RecordedBatch | LegacyRecordedBatch))
            : undefined;
        return { Id: commandId, State: 'Succeeded', ...(response ? { Response: response } : {}) };
      }
      if (!result.ok)
        return { Id: commandId, State: 'Failed', Problem: problemFor(result.failure.kind, result.failure.errors) };
      if (result.deleted) return { Id: commandId, State: 'Succeeded' };
      const location =
        result.entity === SUBSCRIPTION_TYPE
          ? subscriptionLocation(result.encodedId)
          : entityLocation(result.entity, result.encodedId);
      return { Id: commandId, State: 'Succeeded', Location: location };
    }
  }
}
