import { loadCommandWorkerConfig } from '../../infra/config/command-worker-config';
import { runWorkerProcess } from '../shared/worker-process';
import { startCommandWorker, type CommandWorkerOptions } from './command-worker';

/**
 * `npm run worker:commands` (after main.ts has started tracing): one command worker process, or
 * COMMAND_WORKER_PROCESSES of them under one primary. Configuration comes only from the
 * environment: the shared one (WORKER_CONCURRENCY, …) and the command workers' own
 * (infra/config/command-worker-config.ts): COMMAND_LOCK_DURATION_MS and COMMAND_STALLED_INTERVAL_MS,
 * how soon a job of a dead process runs again, and the test-only COMMAND_TEST_PAUSE_MS /
 * COMMAND_TEST_PAUSE_AT, which hold every command at one point so a test can kill the process
 * mid-command and watch another worker recover the stalled job (ignored when NODE_ENV=production).
 */
runWorkerProcess(
  'commands',
  async (config, logger, metrics) => {
    const options: CommandWorkerOptions = { logger, metrics, ...loadCommandWorkerConfig(config) };
    if (options.testPause)
      logger.warn(options.testPause, 'COMMAND_TEST_PAUSE is set: every command is held (test only)');
    return startCommandWorker(config, options);
  },
  { processesVariable: 'COMMAND_WORKER_PROCESSES' },
);
