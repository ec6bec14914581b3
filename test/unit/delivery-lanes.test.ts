import test from 'ava';
import fc from 'fast-check';
import { DeliveryLanes } from '../../domain/webhooks/delivery-lanes';

/** The webhook delivery lanes (issue 24, finding 6) outside the stack: their shares hold whatever happens. */

const SETTINGS = { perSubscription: 2, slowLane: 3, slowMs: 1000 };

test('a subscription gets at most its share; a retry or a slow one goes one at a time in the slow lane', (t) => {
  const lanes = new DeliveryLanes(SETTINGS);
  const a1 = lanes.enter(1, false);
  const a2 = lanes.enter(1, false);
  t.truthy(a1 && a2);
  t.is(lanes.enter(1, false), null, 'the third delivery to one subscription waits');
  t.truthy(lanes.enter(2, false), 'another subscription still gets a place');
  a1!();
  a1!(); // leaving twice gives back one place only
  t.truthy(lanes.enter(1, false));
  t.is(lanes.enter(1, false), null);

  lanes.settle(5, { delivered: false, durationMs: 10 });
  t.true(lanes.isSlow(5, false));
  t.truthy(lanes.enter(5, false));
  t.is(lanes.enter(5, false), null, 'a failing subscription: one at a time');
  lanes.settle(5, { delivered: true, durationMs: 1500 });
  t.true(lanes.isSlow(5, false), 'delivered, but slowly: still in the slow lane');
  lanes.settle(5, { delivered: true, durationMs: 20 });
  t.false(lanes.isSlow(5, false), 'a quick delivery takes it out');
  t.true(lanes.isSlow(6, true), 'a retry is always in the slow lane');
});

test('a delivery running longer than slowMs puts its subscription in the slow lane before it ends', (t) => {
  let now = 0;
  const lanes = new DeliveryLanes(SETTINGS, () => now);
  const held = lanes.enter(7, false);
  t.truthy(held);
  now = 500;
  t.false(lanes.isSlow(7, false));
  now = 1500;
  t.true(lanes.isSlow(7, false), 'held past slowMs');
  t.is(lanes.enter(7, false), null, 'one at a time now, and it has one running');
  held!();
  t.false(lanes.isSlow(7, false), 'nothing running and no attempt settled: not slow');
});

test('a healthy subscription’s delivery waits a bounded time for its place; a slow one never waits', async (t) => {
  const lanes = new DeliveryLanes(SETTINGS);
  const first = lanes.enter(1, false)!;
  lanes.enter(1, false);
  const waiting = lanes.enterWithin(1, false, 5_000);
  first();
  const place = await waiting;
  t.truthy(place, 'handed the place that came free');
  t.is(await lanes.enterWithin(1, false, 20), null, 'none came free in time');
  place!();
  t.truthy(await lanes.enterWithin(1, false, 20), 'a freed place is taken at once');

  lanes.settle(2, { delivered: false, durationMs: 5 });
  lanes.enter(2, false);
  const started = Date.now();
  t.is(await lanes.enterWithin(2, false, 5_000), null);
  t.true(Date.now() - started < 1000, 'a slow subscription is put back, not kept waiting');
});

test('the slow lane as a whole is bounded: healthy subscriptions keep the other slots', (t) => {
  const lanes = new DeliveryLanes(SETTINGS);
  const slow = [10, 11, 12, 13].map((id) => lanes.enter(id, true));
  t.deepEqual(
    slow.map((leave) => leave !== null),
    [true, true, true, false],
  );
  t.truthy(lanes.enter(20, false), 'a healthy subscription is not behind the slow lane');
});

type Op =
  | { kind: 'enter'; sub: number; retry: boolean }
  | { kind: 'leave'; index: number }
  | { kind: 'settle'; sub: number; delivered: boolean; durationMs: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('enter' as const), sub: fc.integer({ min: 1, max: 5 }), retry: fc.boolean() }),
  fc.record({ kind: fc.constant('leave' as const), index: fc.nat(50) }),
  fc.record({
    kind: fc.constant('settle' as const),
    sub: fc.integer({ min: 1, max: 5 }),
    delivered: fc.boolean(),
    durationMs: fc.integer({ min: 0, max: 5000 }),
  }),
);

test('property: whatever the order of deliveries, no subscription and no slow lane exceeds its share', (t) => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const lanes = new DeliveryLanes(SETTINGS);
      const inside: { sub: number; slow: boolean; leave: () => void }[] = [];
      for (const step of ops) {
        if (step.kind === 'enter') {
          const slow = lanes.isSlow(step.sub, step.retry);
          const leave = lanes.enter(step.sub, step.retry);
          if (leave) inside.push({ sub: step.sub, slow, leave });
        } else if (step.kind === 'leave') {
          const [left] = inside.splice(step.index % Math.max(1, inside.length), 1);
          left?.leave();
        } else lanes.settle(step.sub, step);
        const perSub = new Map<number, number>();
        for (const d of inside) perSub.set(d.sub, (perSub.get(d.sub) ?? 0) + 1);
        if ([...perSub.values()].some((n) => n > SETTINGS.perSubscription)) return false;
        if (inside.filter((d) => d.slow).length > SETTINGS.slowLane) return false;
      }
      // Everyone out: every place is given back.
      inside.forEach((d) => d.leave());
      return [1, 2, 3, 4, 5].every((sub) => lanes.enter(sub, false) !== null || lanes.isSlow(sub, false));
    }),
  );
  t.pass();
});
