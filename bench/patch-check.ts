import { Scheme } from '../domain/entities';
import { parseSubscriptionPatch } from '../domain/webhooks/subscription-patch';
import { parsePatch } from '../domain/writes/json-patch';

/**
 * What checking a hostile JSON Patch costs (issue 25: the unit tests count the walk's operations;
 * the time is reported here). One `test` operation with an 8 KB path (4,000 segments) over a
 * 4,000-item value, through the entity check (parsePatch) and the subscription check
 * (parseSubscriptionPatch), in this process. Both used to copy and print the whole path for every
 * item of the value (an 80 KB PATCH held the API's event loop); the walk is now linear in path + value.
 */

export interface PatchCheckReport {
  rounds: number;
  /** Milliseconds per check, median and worst of the rounds. */
  entity: { p50: number; max: number };
  subscription: { p50: number; max: number };
}

const SEGMENTS = 4000;

function timings(rounds: number, check: () => unknown): { p50: number; max: number } {
  check(); // warm: the first call compiles the walk
  const ms = Array.from({ length: rounds }, () => {
    const started = performance.now();
    check();
    return performance.now() - started;
  }).sort((a, b) => a - b);
  const round = (n: number) => Number(n.toFixed(2));
  return { p50: round(ms[Math.floor(rounds / 2)]!), max: round(ms.at(-1)!) };
}

export function patchChecks(rounds = 20): PatchCheckReport {
  const value = Array<number>(SEGMENTS).fill(0);
  const entityPath = '/Notes'.concat('/a'.repeat(SEGMENTS));
  const subscriptionPath = '/a'.repeat(SEGMENTS);
  return {
    rounds,
    entity: timings(rounds, () => parsePatch(Scheme, [{ op: 'test', path: entityPath, value }])),
    subscription: timings(rounds, () => parseSubscriptionPatch([{ op: 'test', path: subscriptionPath, value }], 100)),
  };
}

export function printPatchChecks(report: PatchCheckReport): void {
  console.log(
    `JSON Patch check, a ${SEGMENTS}-segment path over a ${SEGMENTS}-item value (${report.rounds} rounds): ` +
      `entity p50 ${report.entity.p50} ms, max ${report.entity.max} ms; ` +
      `subscription p50 ${report.subscription.p50} ms, max ${report.subscription.max} ms`,
  );
}
