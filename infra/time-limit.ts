/**
 * `promise`, or a rejection naming `what` once `ms` have passed without it settling. The timer
 * never outlives the race, and a `promise` that rejects after it is still handled. For waits on a
 * store that may never answer: a metric read, a readiness check, a QUIT.
 */
export function withinTime<T>(promise: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  // A thenable (a knex query) is run once, here; Promise.race handles a rejection after the time.
  return Promise.race([Promise.resolve(promise), late]).finally(() => clearTimeout(timer));
}
