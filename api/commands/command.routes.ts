import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { findCommand } from '../../db/commands/command-log';
import { notFound, unavailable } from '../../domain/errors/domain-error';
import { callerOf } from '../auth/caller';
import type { CommandBus, JobStatus } from './command-bus';
import { commandStateOf } from './command-state';

const COMMAND_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * `GET /Commands/<id>`: the state of a write answered 202 (DESIGN §6, §10). The command log is the
 * record of every finished command; a command not in it yet is looked up in the queue. Only the
 * caller who sent a command may see it; to anyone else it does not exist.
 */
export function commandHandler(deps: { knex: Knex; commandBus: CommandBus }): RequestHandler {
  return async (req, res) => {
    const id = req.params.id as string;
    const missing = () => notFound(`Command '${id}' does not exist.`);
    if (!COMMAND_ID.test(id)) throw missing();
    const logged = await findCommand(deps.knex, id);
    let status: JobStatus | null;
    if (logged?.result) {
      status = {
        subject: logged.subject,
        batch: logged.name === 'batch',
        dispatched: { state: 'finished', result: logged.result },
      };
    } else {
      try {
        status = await deps.commandBus.jobStatus(id);
      } catch (err) {
        req.log.warn({ commandId: id, err: (err as Error).message }, 'command queue unreachable');
        throw unavailable('The command queue is unavailable; retry later.');
      }
    }
    if (status?.batch && status.dispatched.state === 'finished') {
      // A batch's response is in the command log, written before its job completed: a job seen
      // completed here finished after the read above, so the log has it now.
      const recorded = await findCommand(deps.knex, id);
      if (recorded?.result) status = { ...status, dispatched: { state: 'finished', result: recorded.result } };
    }
    if (!status || status.subject !== callerOf(req).subject) throw missing();
    res.json(commandStateOf(id, status.dispatched, status.batch));
  };
}
