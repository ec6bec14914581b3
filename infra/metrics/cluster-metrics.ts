import cluster from 'node:cluster';
import { AggregatorRegistry, Registry } from 'prom-client';
import type { Scrape } from './metrics-server';

/**
 * Metrics of processes under one primary (node:cluster: API_PROCESSES, COMMAND_WORKER_PROCESSES).
 * One scrape must see every process, or counters would jump between processes' values: each
 * process offers its registry to prom-client's cluster aggregation, and the primary sums them
 * (gauges read from a store take the largest, see `storeGauge`). A process of the API answers
 * `GET /metrics` by asking the primary for that sum; worker processes' sum is served by the
 * primary itself on METRICS_PORT.
 */

const ASK = 'emapi:metrics-ask';
const ANSWER = 'emapi:metrics-answer';
const ASK_TIMEOUT_MS = 10_000;

interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

export const isClusterChild = (): boolean => cluster.isWorker;

/** In the primary: the sum of every process's metrics, also given to processes that ask for it. */
export function aggregateClusterMetrics(): () => Promise<Scrape> {
  const aggregator = new AggregatorRegistry();
  const scrape = async (): Promise<Scrape> => ({
    contentType: aggregator.contentType,
    text: await aggregator.clusterMetrics(),
  });
  cluster.on('message', (worker, message: { type?: unknown; id?: unknown }) => {
    if (message?.type !== ASK) return;
    scrape().then(
      ({ text }) => worker.send({ type: ANSWER, id: message.id, text }),
      (err: unknown) => worker.send({ type: ANSWER, id: message.id, error: (err as Error).message }),
    );
  });
  return scrape;
}

let asked = 0;
const pending = new Map<number, (answer: Answer) => void>();

/** In a process under a primary: offers `registry` to the primary's sum; returns how to ask for it. */
export function joinClusterMetrics(registry: Registry): () => Promise<Scrape> {
  new AggregatorRegistry(); // installs prom-client's answer to the primary's requests in this process
  AggregatorRegistry.setRegistries([registry]);
  process.on('message', (message: Answer) => {
    if (message?.type === ANSWER) pending.get(message.id)?.(message);
  });
  return () =>
    new Promise<Scrape>((resolve, reject) => {
      const id = ++asked;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the primary did not answer with metrics within ${ASK_TIMEOUT_MS} ms`));
      }, ASK_TIMEOUT_MS);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        pending.delete(id);
        if (answer.error !== undefined || answer.text === undefined) reject(new Error(answer.error ?? 'no metrics'));
        else resolve({ contentType: Registry.PROMETHEUS_CONTENT_TYPE, text: answer.text });
      });
      process.send!({ type: ASK, id });
    });
}
