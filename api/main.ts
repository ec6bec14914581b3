import { startProcess } from '../infra/tracing/tracing';

/** `npm run api`: tracing first (infra/tracing), then the API process (api-process.ts). */
startProcess('api', () => import('./api-process'));
