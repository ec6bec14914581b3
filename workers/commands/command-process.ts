import { ConfigError } from '../../infra/config/load-config';
import { runWorkerProcess } from '../shared/worker-process';
import { startCommandWorker, type CommandWorkerOptions } from './command-worker';
import type { TestPause } from './command-runner';

/**
 * `npm run worker:commands` (after main.ts has started tracing): one command worker process, or COMMAND_WORKER_PROCESSES of them under
 * one primary. Configuration comes only from the environment:
 *
 * - WORKER_CONCURRENCY: jobs one process runs at once (loadConfig).
 * - COMMAND_WORKER_PROCESSES: processes to run (default 1); a process that dies is replaced.
 * - COMMAND_LOCK_DURATION_MS, COMMAND_STALLED_INTERVAL_MS: how soon a job of a dead process runs
 *   again; default WORKER_LOCK_DURATION_MS / WORKER_STALLED_INTERVAL_MS, else BullMQ's 30 s.
 * - COMMAND_TEST_PAUSE_MS with COMMAND_TEST_PAUSE_AT=before-commit|after-commit: test only, ignored
 *   when NODE_ENV=production. Holds every command at that point so a test can kill the process
 *   mid-command and watch another worker recover the stalled job.
 */

function positiveInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`${name} must be a positive integer, got '${raw}'`);
  return n;
}

function testPauseOf(env: NodeJS.ProcessEnv): TestPause | undefined {
  const ms = positiveInt(env, 'COMMAND_TEST_PAUSE_MS');
  if (ms === undefined || env.NODE_ENV === 'production') return undefined;
  const at = env.COMMAND_TEST_PAUSE_AT ?? 'before-commit';
  if (at !== 'before-commit' && at !== 'after-commit') {
    throw new ConfigError(`COMMAND_TEST_PAUSE_AT must be before-commit or after-commit, got '${at}'`);
  }
  return { at, ms };
}

runWorkerProcess(
  'commands',
  async (config, logger, metrics) => {
    const options: CommandWorkerOptions = {
      logger,
      metrics,
      stalledRecovery: {
        lockDuration: positiveInt(process.env, 'COMMAND_LOCK_DURATION_MS') ?? config.stalledRecovery.lockDuration,
        stalledInterval:
          positiveInt(process.env, 'COMMAND_STALLED_INTERVAL_MS') ?? config.stalledRecovery.stalledInterval,
      },
      testPause: testPauseOf(process.env),
    };
    if (options.testPause)
      logger.warn(options.testPause, 'COMMAND_TEST_PAUSE is set: every command is held (test only)');
    return startCommandWorker(config, options);
  },
  { processesVariable: 'COMMAND_WORKER_PROCESSES' },
);
