/**
 * Fair shares of one notification worker's delivery slots (WEBHOOK_CONCURRENCY) between
 * subscriptions (issue 24, finding 6): without them one receiver that answers slowly, or not at all,
 * ends up holding every slot and every other subscription's deliveries wait behind it.
 *
 * - A subscription has at most `perSubscription` deliveries running at once
 *   (WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION).
 * - A subscription whose last attempt failed or took longer than `slowMs`, or with a delivery
 *   running longer than that, and every retry, is in the slow lane: one delivery at a time for it,
 *   and at most `slowLane` for all such subscriptions together (WEBHOOK_SLOW_LANE_CONCURRENCY,
 *   below WEBHOOK_CONCURRENCY). A delivered attempt that was quick takes it out again.
 *
 * So the healthy subscriptions always have WEBHOOK_CONCURRENCY − slow lane − the per-subscription
 * share of each receiver not yet known to be slow. A delivery that finds no place waits a bounded
 * time for one if its subscription is healthy (`enterWithin`); otherwise it is not run and the
 * worker puts the job back for a moment (nothing is attempted, the retry schedule is untouched).
 * The counts are this process's: each worker process shares out its own slots.
 */

export interface LaneSettings {
  perSubscription: number;
  slowLane: number;
  /** An attempt that took longer than this puts its subscription in the slow lane. */
  slowMs: number;
}

/** An attempt slower than this puts its subscription in the slow lane: the delay issue 24 allows another. */
export const SLOW_DELIVERY_MS = 1000;

/** Subscriptions remembered as slow, at most (the oldest is forgotten first). */
const MAX_REMEMBERED = 10_000;

interface InFlight {
  startedAt: number;
  slow: boolean;
}

/** A healthy subscription's delivery waiting for one of its places: handed it when one frees. */
type Waiter = (leave: () => void) => void;

export class DeliveryLanes {
  private readonly inFlight = new Map<number, Set<InFlight>>();
  private readonly waiters = new Map<number, Waiter[]>();
  private readonly slow = new Set<number>();
  private slowRunning = 0;

  constructor(
    readonly settings: LaneSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Is this subscription in the slow lane now? A retry always is; so is a subscription whose last
   * attempt failed or was slow, or one with a delivery running longer than `slowMs` already (known
   * slow before its first attempt ends).
   */
  isSlow(subscriptionId: number, retry: boolean): boolean {
    if (retry || this.slow.has(subscriptionId)) return true;
    const since = this.now() - this.settings.slowMs;
    for (const delivery of this.inFlight.get(subscriptionId) ?? []) if (delivery.startedAt < since) return true;
    return false;
  }

  /**
   * A place for one delivery to `subscriptionId`, or null when its share is taken; the place is
   * given back by calling what is returned (once).
   */
  enter(subscriptionId: number, retry: boolean): (() => void) | null {
    const slow = this.isSlow(subscriptionId, retry);
    const running = this.inFlight.get(subscriptionId) ?? new Set<InFlight>();
    if (running.size >= (slow ? 1 : this.settings.perSubscription)) return null;
    if (slow && this.slowRunning >= this.settings.slowLane) return null;
    const delivery = { startedAt: this.now(), slow };
    running.add(delivery);
    this.inFlight.set(subscriptionId, running);
    if (slow) this.slowRunning++;
    return () => {
      if (!running.delete(delivery)) return;
      if (running.size === 0 && this.inFlight.get(subscriptionId) === running) this.inFlight.delete(subscriptionId);
      if (delivery.slow) this.slowRunning--;
      this.wake(subscriptionId);
    };
  }

  /**
   * Like `enter`, but a delivery to a subscription that is not slow waits up to `waitMs` for one of
   * its places to come free: a burst to a quick receiver goes through at its pace instead of being
   * put back. The wait is bounded, so a receiver that turns slow holds the waiting slots no longer
   * than that; a slow subscription's delivery never waits.
   */
  enterWithin(subscriptionId: number, retry: boolean, waitMs: number): Promise<(() => void) | null> {
    const place = this.enter(subscriptionId, retry);
    if (place || waitMs <= 0 || this.isSlow(subscriptionId, retry)) return Promise.resolve(place);
    return new Promise((resolve) => {
      const queue = this.waiters.get(subscriptionId) ?? [];
      const waiter: Waiter = (leave) => {
        clearTimeout(timer);
        resolve(leave);
      };
      const timer = setTimeout(() => {
        const at = queue.indexOf(waiter);
        if (at >= 0) queue.splice(at, 1);
        if (queue.length === 0 && this.waiters.get(subscriptionId) === queue) this.waiters.delete(subscriptionId);
        resolve(null);
      }, waitMs);
      queue.push(waiter);
      this.waiters.set(subscriptionId, queue);
    });
  }

  /** A place of `subscriptionId` came free: the first delivery waiting for one takes it. */
  private wake(subscriptionId: number): void {
    const queue = this.waiters.get(subscriptionId);
    if (!queue?.length) return;
    const place = this.enter(subscriptionId, false);
    if (!place) return;
    const first = queue.shift()!;
    if (queue.length === 0) this.waiters.delete(subscriptionId);
    first(place);
  }

  /** What an attempt showed of its receiver: quick and delivered, or not. */
  settle(subscriptionId: number, outcome: { delivered: boolean; durationMs: number }): void {
    if (outcome.delivered && outcome.durationMs <= this.settings.slowMs) {
      this.slow.delete(subscriptionId);
      return;
    }
    this.slow.delete(subscriptionId);
    this.slow.add(subscriptionId);
    if (this.slow.size > MAX_REMEMBERED) this.slow.delete(this.slow.values().next().value!);
  }
}
