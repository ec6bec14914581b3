/**
 * A first-come, first-served lane of `slots` places for CPU-bound work that takes many turns of the
 * event loop (checking, signing and queueing a 16 MiB `$batch`). The loop is one thread, so running
 * such jobs one after another costs no throughput; what it changes is that eight hostile batches
 * at once no longer put eight slices of work into every turn, each holding up every other caller.
 * Enter only once the request's body has arrived: a slow sender must not hold a place.
 */
export interface CpuLane {
  /** Resolves with the place's release (idempotent) once one is free. */
  enter(): Promise<() => void>;
  /** Jobs waiting for a place now. */
  readonly waiting: number;
}

export function cpuLane(slots: number): CpuLane {
  if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`a lane needs at least one place, got ${slots}`);
  const queue: (() => void)[] = [];
  let held = 0;
  const place = (): (() => void) => {
    held += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = queue.shift();
      if (next) next();
      else held -= 1;
    };
  };
  return {
    enter() {
      if (held < slots) return Promise.resolve(place());
      // The releasing holder hands its place on: `held` stays as it is.
      return new Promise((resolve) =>
        queue.push(() => {
          held -= 1;
          resolve(place());
        }),
      );
    },
    get waiting() {
      return queue.length;
    },
  };
}
