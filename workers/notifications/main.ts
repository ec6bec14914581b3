import { runWorkerProcess } from '../shared/worker-process';
import { startNotificationsWorker } from './notifications-worker';

runWorkerProcess('notifications', startNotificationsWorker);
