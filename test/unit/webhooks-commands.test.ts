import test from 'ava';
import { commandStateOf } from '../../api/commands/command-state';
import { DomainError } from '../../domain/errors/domain-error';
import { applySubscriptionPatch, parseSubscriptionPatch, urlsSetBy } from '../../domain/webhooks/subscription-patch';

/** Subscription commands outside the stack: their PATCH checks and what `/Commands/<id>` says of them. */

const doc = { Id: 'x', Url: 'https://a.example/h', Events: ['*'], Description: null, Active: true };

function errorsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    return (err as DomainError).errors;
  }
  return [];
}

test('PATCH operations: only Url, Events (or its items) and Active change; test looks anywhere', (t) => {
  t.deepEqual(parseSubscriptionPatch([{ op: 'replace', path: '/Active', value: false }], 100), [
    { op: 'replace', path: '/Active', value: false },
  ]);
  t.deepEqual(
    errorsOf(() => parseSubscriptionPatch([{ op: 'replace', path: '/Description', value: 'd' }], 100)),
    ['Subscription.Description: cannot be patched (only Url, Events, Active can)'],
  );
  t.deepEqual(
    errorsOf(() => parseSubscriptionPatch([{ op: 'remove', path: '/Url' }], 100)),
    ['Subscription.Url: cannot be removed (it is required)'],
  );
  t.deepEqual(
    errorsOf(() => parseSubscriptionPatch([{ op: 'copy', from: '/Description', path: '/Url' }], 100)),
    ['Subscription.Url: operation 0 (copy) may only copy single items of Events'],
  );
  t.deepEqual(
    errorsOf(() => parseSubscriptionPatch({}, 100)),
    ['JSON Patch must be an array.'],
  );
  t.regex(
    errorsOf(() => parseSubscriptionPatch(Array(3).fill({ op: 'test', path: '/Id', value: 1 }), 2))[0]!,
    /MAX_PATCH_OPERATIONS/,
  );
  t.deepEqual(parseSubscriptionPatch([{ op: 'test', path: '/Id', value: 'x' }], 100).length, 1);
  t.deepEqual(
    urlsSetBy([
      { op: 'replace', path: '/Url', value: 'http://a/' },
      { op: 'test', path: '/Url', value: 'http://b/' },
    ]),
    ['http://a/'],
  );
});

test('applying: items of Events move, a missing index is a conflict', (t) => {
  t.deepEqual(
    applySubscriptionPatch(doc, [
      { op: 'add', path: '/Events/-', value: 'SchemeCreated' },
      { op: 'move', from: '/Events/1', path: '/Events/0' },
    ]),
    { ...doc, Events: ['SchemeCreated', '*'] },
  );
  const err = t.throws(() => applySubscriptionPatch(doc, [{ op: 'replace', path: '/Events/5', value: '*' }]));
  t.is((err as DomainError).kind, 'Conflict');
  const leading = t.throws(() => applySubscriptionPatch(doc, [{ op: 'replace', path: '/Events/00', value: '*' }]));
  t.is((leading as DomainError).kind, 'Conflict');
});

test('/Commands/<id> of a subscription command that succeeded names the subscription', (t) => {
  const result = { ok: true, entity: 'Subscription', dbId: 3, encodedId: 'AbCdEf', version: 1 } as const;
  t.deepEqual(commandStateOf('c1', { state: 'finished', result }), {
    Id: 'c1',
    State: 'Succeeded',
    Location: '/Subscriptions/AbCdEf',
  });
});

test('a PATCH with a long test path over a large value is accepted, and a bad one names at most 20 places', (t) => {
  // The walk's cost (the path printed once, not once per item) is counted in validation-patch.test.ts.
  const path = '/a'.repeat(4000);
  const value = Array<number>(4000).fill(0);
  t.deepEqual(parseSubscriptionPatch([{ op: 'test', path, value }], 100), [{ op: 'test', path, value }]);
  const errors = errorsOf(() => parseSubscriptionPatch([{ op: 'test', path, value: value.map(() => Infinity) }], 100));
  t.is(errors.length, 20);
  t.true(
    errors.every((e) => e.startsWith('Subscription.a.a.') && e.endsWith(': must be a finite number (operation 0)')),
    errors[0],
  );
});
