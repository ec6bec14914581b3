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
      return { Id: commandId, State: 'Failed', Problem: problemFor('Internal', []) };
    case 'finished': {
      const result = dispatched.result;
      if (!result.ok)
        return { Id: commandId, State: 'Failed', Problem: problemFor(result.failure.kind, result.failure.errors) };
      if (result.deleted) return { Id: commandId, State: 'Succeeded' };
      return { Id: commandId, State: 'Succeeded', Location: entityLocation(result.entity, result.encodedId) };
    }
  }
}
