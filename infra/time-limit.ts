/**
 * `promise`, or a rejection naming `what` once `ms` have passed without it settling. The timer
 * never outlives the race, and a `promise` that settles after it is still handled (no unhandled
 * rejection). For waits on a store that may never answer: a metric read, a readiness check, a QUIT.
 */
export function withinTime<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
