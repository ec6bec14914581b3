import { startProcess } from '../../infra/tracing/tracing';

/** `npm run worker:views`: tracing first (infra/tracing), then the worker's modules. */
startProcess('views', async () => {
  const { runWorkerProcess } = await import('../shared/worker-process');
  const { startViewsWorker } = await import('./views-worker');
  runWorkerProcess('views', startViewsWorker);
});
