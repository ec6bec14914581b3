import { readVariables, type Environment } from './environment';
import type { AppConfig } from './load-config';

/**
 * What a command worker process reads besides the configuration every process shares: its queue's
 * recovery timings (COMMAND_LOCK_DURATION_MS, COMMAND_STALLED_INTERVAL_MS, else the WORKER_* ones)
 * and the test-only pause (COMMAND_TEST_PAUSE_*), which lets a test kill a worker mid-command.
 */
export function loadCommandWorkerConfig(config: AppConfig, env?: Environment) {
  const e = readVariables(['COMMAND_LOCK_DURATION_MS', 'COMMAND_STALLED_INTERVAL_MS', 'COMMAND_TEST_PAUSE_MS'], env);
  return {
    stalledRecovery: {
      lockDuration: e.COMMAND_LOCK_DURATION_MS ?? config.stalledRecovery.lockDuration,
      stalledInterval: e.COMMAND_STALLED_INTERVAL_MS ?? config.stalledRecovery.stalledInterval,
    },
    testPause: testPauseOf(e.COMMAND_TEST_PAUSE_MS, config.production, env),
  };
}

/** Never in production; COMMAND_TEST_PAUSE_AT is read only when there is a pause to place. */
function testPauseOf(ms: number | undefined, production: boolean, env?: Environment) {
  if (ms === undefined || production) return undefined;
  const { COMMAND_TEST_PAUSE_AT: at } = readVariables(['COMMAND_TEST_PAUSE_AT'], env);
  return { at, ms };
}
