import { entityByName } from '../../domain/entities';
import { problemFor, type ProblemBody } from '../http/problem';
import type { Dispatched } from './command-bus';

/** The body of `GET /Commands/<id>` (DESIGN §10). */
export interface CommandStateBody {
  Id: string;
  State: 'Pending' | 'Succeeded' | 'Failed';
  Location?: string;
  Problem?: ProblemBody;
}

/** What a command whose job failed answers (503): nothing applied, send it again. */
export const COMMAND_NOT_APPLIED =
  'The command could not be applied because a data store or worker failed while it ran; nothing was changed. Send the request again.';

export function commandLocation(commandId: string): string {
  return `/Commands/${commandId}`;
}

export function entityLocation(entityName: string, encodedId: string): string {
  return `/${entityByName(entityName).route}/${encodedId}`;
}

export function commandStateOf(commandId: string, dispatched: Dispatched): CommandStateBody {
  switch (dispatched.state) {
    case 'pending':
      return { Id: commandId, State: 'Pending' };
    case 'failed':
      // Not the client's doing: a store or worker failed. Nothing was applied; a repeat runs it.
      return { Id: commandId, State: 'Failed', Problem: problemFor('Unavailable', [COMMAND_NOT_APPLIED]) };
    case 'finished': {
      const result = dispatched.result;
      if (!result.ok)
        return { Id: commandId, State: 'Failed', Problem: problemFor(result.failure.kind, result.failure.errors) };
      if (result.deleted) return { Id: commandId, State: 'Succeeded' };
      return { Id: commandId, State: 'Succeeded', Location: entityLocation(result.entity, result.encodedId) };
    }
  }
}
