import { runWorkerProcess } from '../shared/worker-process';
import { startViewsWorker } from './views-worker';

runWorkerProcess('views', startViewsWorker);
