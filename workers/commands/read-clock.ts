import { DomainError, tooManyRequests } from '../../domain/errors/domain-error';

/**
 * A time budget for the GETs of a `$batch` (DESIGN §13): BATCH_READ_TIMEOUT_MS for all of them,
 * BATCH_GROUP_READ_TIMEOUT_MS for those of one atomicity group (they hold its locks). Each read
 * runs under a statement timeout no longer than what its budgets have left; once a budget is spent,
 * the reads it covers answer a problem naming it instead of running: 429 with Retry-After, as a
 * limit of the caller's (DESIGN §13: every limit is a 4xx), not the 503 of a lone read that ran
 * out of STATEMENT_TIMEOUT_MS.
 */

/** Seconds a client is asked to wait before sending the requests a spent budget left unrun. */
const RETRY_AFTER_SECONDS = 1;

export class ReadClock {
  private spentMs = 0;

  constructor(
    private readonly limitMs: number,
    /** The variable that sets the limit, named in the answers. */
    readonly variable: string,
  ) {}

  remainingMs(): number {
    return Math.max(0, this.limitMs - this.spentMs);
  }

  /** The answer of a read this budget stops (not run, or cut short). */
  spent(): DomainError {
    return tooManyRequests(
      `Not run in full: the batch's reads used their ${this.limitMs} ms (${this.variable}); send this request again in another batch, or with fewer or narrower GETs.`,
      RETRY_AFTER_SECONDS,
    );
  }

  /** Counts the time `work` takes, whatever it answers. */
  async time<T>(work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.spentMs += performance.now() - started;
    }
  }
}

/**
 * Runs a read under `clocks` and STATEMENT_TIMEOUT_MS: `run` is given the statement timeout to use
 * (the shortest of them). A spent budget answers without running; a statement stopped by a budget
 * answers that budget's problem, not STATEMENT_TIMEOUT_MS's.
 */
export async function withinBudgets<T>(
  clocks: readonly ReadClock[],
  statementTimeoutMs: number,
  run: (timeoutMs: number) => Promise<T>,
): Promise<T> {
  let binding: ReadClock | undefined;
  let timeoutMs = statementTimeoutMs;
  for (const clock of clocks) {
    const left = Math.floor(clock.remainingMs());
    if (left <= 0) throw clock.spent();
    if (left < timeoutMs) [binding, timeoutMs] = [clock, left];
  }
  const timed = clocks.reduce<() => Promise<T>>(
    (work, clock) => () => clock.time(work),
    () => run(timeoutMs),
  );
  try {
    return await timed();
  } catch (err) {
    if (
      binding &&
      err instanceof DomainError &&
      err.kind === 'Unavailable' &&
      /STATEMENT_TIMEOUT_MS/.test(err.message)
    ) {
      throw binding.spent();
    }
    throw err;
  }
}
