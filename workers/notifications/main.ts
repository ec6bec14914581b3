import { startProcess } from '../../infra/tracing/tracing';

/** `npm run worker:notifications`: tracing first (infra/tracing), then the worker's modules. */
startProcess('notifications', async () => {
  const { runWorkerProcess } = await import('../shared/worker-process');
  const { startNotificationsWorker } = await import('./notifications-worker');
  runWorkerProcess('notifications', startNotificationsWorker);
});
