import { startProcess } from '../../infra/tracing/tracing';

/** `npm run worker:commands`: tracing first (infra/tracing), then the process (command-process.ts). */
startProcess('commands', () => import('./command-process'));
