import { readVariables, type ENTRY_POINT_ENVIRONMENT, type Environment } from './environment';
import { logLevelOf } from './load-config';

/** API_PROCESSES or COMMAND_WORKER_PROCESSES. */
export type ProcessCountVariable = keyof typeof ENTRY_POINT_ENVIRONMENT;

/**
 * How many copies of itself an entry point runs under one primary: read before the configuration,
 * since a primary serves no request and loads none.
 */
export function processCount(variable: ProcessCountVariable, env?: Environment): number {
  return readVariables([variable], env)[variable];
}

/** A primary's log level: LOG_LEVEL's rule, without the rest of the configuration. */
export function primaryLogLevel(env?: Environment): string {
  return logLevelOf(readVariables(['LOG_LEVEL', 'NODE_ENV'], env));
}
