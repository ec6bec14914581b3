import test from 'ava';
import fc from 'fast-check';
import { cpuLane } from '../../api/limits/cpu-lane';

test('a lane of one place lets jobs in one at a time, first come first served', async (t) => {
  const lane = cpuLane(1);
  const order: string[] = [];
  const first = await lane.enter();
  const second = lane.enter().then((leave) => (order.push('second'), leave));
  const third = lane.enter().then((leave) => (order.push('third'), leave));
  t.is(lane.waiting, 2);
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(order, [], 'nobody enters while the place is held');
  first();
  first(); // leaving twice hands on one place, not two
  const leaveSecond = await second;
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(order, ['second']);
  leaveSecond();
  (await third)();
  t.deepEqual(order, ['second', 'third']);
  t.is(lane.waiting, 0);
  // Free again: entering does not wait.
  (await lane.enter())();
});

test('property: never more holders than places, and every job gets in', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.array(fc.nat({ max: 3 }), { maxLength: 30 }),
      async (slots, holds) => {
        const lane = cpuLane(slots);
        let inside = 0;
        let most = 0;
        await Promise.all(
          holds.map(async (turns) => {
            const leave = await lane.enter();
            inside += 1;
            most = Math.max(most, inside);
            for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
            inside -= 1;
            leave();
          }),
        );
        return most <= slots && inside === 0 && lane.waiting === 0;
      },
    ),
  );
  t.pass();
});

test('a lane needs a place', (t) => {
  t.throws(() => cpuLane(0), { instanceOf: RangeError });
});
