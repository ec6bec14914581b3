import { performance } from 'node:perf_hooks';

/**
 * For CPU work of many steps on one request (checking or signing a 16 MiB `$batch`): the returned
 * `pause` yields to the event loop once `sliceMs` have passed since the last yield, so other callers
 * get a turn every few milliseconds while the work itself pays only one check per step.
 */
export function turnSlicer(sliceMs: number): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
