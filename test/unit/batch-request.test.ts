import test from 'ava';
import fc from 'fast-check';
import { parseBatch, type BatchRequest } from '../../domain/batch/batch-request';
import { referencesIn, withReferencesResolved } from '../../domain/batch/batch-references';
import { DomainError } from '../../domain/errors/domain-error';
import { DESIGN_BATCH_EXAMPLE } from '../../domain/batch/batch-example';

/** DESIGN §12: what makes a body a valid batch, checked before anything runs. */

const LIMITS = { maxRequests: 1000 };

function failureOf(raw: unknown, limits = LIMITS): { kind: string; errors: string[] } | null {
  try {
    parseBatch(raw, limits);
    return null;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { kind: err.kind, errors: err.errors };
  }
}

const post = (id: string, extra: object = {}) => ({
  id,
  method: 'POST',
  url: 'Companies',
  body: { Name: id },
  ...extra,
});

test('the example of DESIGN §12 is a valid batch: dependsOn as named, references found', (t) => {
  const requests = parseBatch(
    {
      requests: DESIGN_BATCH_EXAMPLE.map((request) =>
        request.id === 's1' ? { ...request, method: 'post', url: '/Schemes' } : request,
      ),
    },
    LIMITS,
  );
  t.deepEqual(
    requests.map((r: BatchRequest) => [r.id, r.method, r.dependsOn, r.urlReference, r.bodyReferences]),
    [
      ['a1', 'POST', [], undefined, undefined],
      ['s1', 'POST', [], undefined, true],
      ['p1', 'PATCH', ['g1'], 's1', undefined],
      ['r1', 'GET', ['p1'], undefined, undefined],
    ],
  );
  t.deepEqual(requests[1]!.headers, { prefer: 'return=representation' }, 'header names in lower case');
});

test('a group named in dependsOn stays one name: the parsed batch grows with its body, not with the square of it', (t) => {
  // n/2 requests in one group, n/2 each naming it: expanded into members, that was n²/4 ids (a
  // 80 KB body of 1,000 requests became 250,000 ids, a 1.8 MB command to sign, queue and parse).
  const batchOf = (n: number) => ({
    requests: [
      ...Array.from({ length: n / 2 }, (_, i) => post(`a${i}`, { atomicityGroup: 'g' })),
      ...Array.from({ length: n / 2 }, (_, i) => ({ id: `b${i}`, method: 'GET', url: 'Companies', dependsOn: ['g'] })),
    ],
  });
  const perByte = (n: number) => {
    const raw = batchOf(n);
    return JSON.stringify(parseBatch(raw, LIMITS)).length / JSON.stringify(raw).length;
  };
  const growth = perByte(1000) / perByte(125);
  t.true(growth < 1.5, `8 × the requests made ${growth.toFixed(2)} × the parsed size per body byte`);
  t.deepEqual(parseBatch(batchOf(4), LIMITS)[3]!.dependsOn, ['g']);
});

test('a body that is not a batch is one 400 naming every problem', (t) => {
  t.is(failureOf(null)?.kind, 'Validation');
  t.is(failureOf([])?.kind, 'Validation');
  t.deepEqual(failureOf({})?.errors, ['$batch.requests: must be an array of requests']);
  const failure = failureOf({
    requests: [
      7,
      { id: '', method: 'GET', url: 'Companies' },
      { id: 'x', method: 3, url: 'Companies', headers: { a: 1 } },
      { id: 'y', method: 'GET', url: 'Companies', extra: true },
    ],
  });
  t.deepEqual(failure?.errors, [
    '$batch.requests[0]: must be an object',
    '$batch.requests[1].id: must be a string of 1 to 200 characters',
    '$batch.requests[2].method: must be an HTTP method name',
    '$batch.requests[2].headers: must be an object of at most 20 string values',
    "$batch.requests[3]: unknown member 'extra'",
  ]);
});

test('ids, groups, dependsOn and references break the batch when they point nowhere or forward', (t) => {
  const errors = (requests: object[]) => failureOf({ requests })?.errors ?? [];
  t.deepEqual(errors([post('a'), post('a')]), ["$batch.requests[1].id: 'a' is used by an earlier request"]);
  t.deepEqual(errors([post('a', { atomicityGroup: 'g' }), post('b'), post('c', { atomicityGroup: 'g' })]), [
    "$batch.requests[2].atomicityGroup: the requests of group 'g' must be next to each other",
  ]);
  t.deepEqual(errors([post('a', { dependsOn: ['b'] }), post('b')]), [
    "$batch.requests[0].dependsOn: 'b' is not an earlier request or group",
  ]);
  t.deepEqual(errors([post('a', { atomicityGroup: 'g', dependsOn: ['g'] })]), [
    "$batch.requests[0].dependsOn: 'g' is not an earlier request or group",
  ]);
  t.deepEqual(errors([{ id: 'r', method: 'GET', url: '$a' }, post('a')]), [
    "$batch.requests[0]: '$a' does not name an earlier request",
  ]);
  t.deepEqual(errors([{ id: 'g', method: 'GET', url: 'Companies' }, post('a', { atomicityGroup: 'g' })]), [
    "$batch.requests[0].id: 'g' is also the name of an atomicity group",
  ]);
  t.deepEqual(
    errors([
      { id: 'r', method: 'GET', url: 'Companies' },
      { id: 'p', method: 'PATCH', url: '$r' },
    ]),
    ["$batch.requests[1]: '$r' names a GET, which creates no entity"],
  );
  t.deepEqual(errors([post('a'), { id: 's', method: 'POST', url: 'Schemes', body: { Address: { Id: '$a' } } }]), [
    "$batch.requests[1]: '$a' must be in the same atomicity group or named (itself or its group) in dependsOn",
  ]);
  // Named through its group, or in the same group: fine.
  t.is(
    failureOf({
      requests: [
        post('a', { atomicityGroup: 'g' }),
        { id: 's', method: 'POST', url: 'Schemes', atomicityGroup: 'g', body: { Address: { Id: '$a' } } },
        {
          id: 'p',
          method: 'PATCH',
          url: '$s',
          dependsOn: ['g'],
          body: [{ op: 'replace', path: '/Address/Id', value: '$a' }],
        },
      ],
    }),
    null,
  );
});

test('past BATCH_MAX_REQUESTS the batch is a 413 naming the limit', (t) => {
  const failure = failureOf({ requests: [post('a'), post('b'), post('c')] }, { maxRequests: 2 });
  t.is(failure?.kind, 'TooLarge');
  t.regex(failure!.errors[0]!, /BATCH_MAX_REQUESTS/);
  t.is(failureOf({ requests: [post('a'), post('b')] }, { maxRequests: 2 }), null);
});

test('references: relation objects anywhere, `/…/Id` paths of PATCH operations; resolved in a copy', (t) => {
  const body = { Address: { Id: '$a' }, Companies: [{ Company: { Id: '$c' }, Role: '$not' }], Name: '$x' };
  t.deepEqual(referencesIn(body, false).sort(), ['a', 'c']);
  const patch = [
    { op: 'replace', path: '/Address/Id', value: '$a' },
    { op: 'add', path: '/Companies/-', value: { Company: { Id: '$c' } } },
    { op: 'replace', path: '/SchemeName', value: '$n' },
  ];
  t.deepEqual(referencesIn(patch, true).sort(), ['a', 'c']);
  const resolved = withReferencesResolved(patch, true, (id) => `ID_${id}`);
  t.deepEqual(resolved, [
    { op: 'replace', path: '/Address/Id', value: 'ID_a' },
    { op: 'add', path: '/Companies/-', value: { Company: { Id: 'ID_c' } } },
    { op: 'replace', path: '/SchemeName', value: '$n' },
  ]);
  t.is(patch[0]!.value, '$a', 'the original is left as it was');
  // Deeper than any body: not walked, no stack exhausted.
  let deep: unknown = { Id: '$z' };
  for (let i = 0; i < 100_000; i++) deep = [deep];
  t.deepEqual(referencesIn(deep, false), []);
});

test('property: any JSON is a batch or one client problem, never another error', (t) => {
  const request = fc.record(
    {
      id: fc.oneof(fc.string({ maxLength: 3 }), fc.integer()),
      method: fc.oneof(fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD'), fc.anything()),
      url: fc.oneof(fc.constantFrom('Companies', '$a', '$b', '/Schemes/x', '$'), fc.string()),
      atomicityGroup: fc.constantFrom('g', 'h', 'a'),
      dependsOn: fc.oneof(fc.array(fc.constantFrom('a', 'b', 'g', 'h', 'zz')), fc.anything()),
      headers: fc.oneof(fc.dictionary(fc.string(), fc.string()), fc.anything()),
      body: fc.oneof(fc.anything(), fc.constant({ Address: { Id: '$a' } })),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(
      fc.oneof(fc.anything(), fc.record({ requests: fc.array(fc.oneof(request, fc.anything()), { maxLength: 8 }) })),
      (raw) => {
        try {
          const requests = parseBatch(raw, { maxRequests: 5 });
          // What passes keeps its promises: unique ids, dependencies on earlier requests or closed groups.
          const seen = new Set<string>();
          const closed = new Set<string>();
          for (const r of requests) {
            if (seen.has(r.id)) return false;
            if (!r.dependsOn.every((name) => seen.has(name) || closed.has(name))) return false;
            seen.add(r.id);
            if (r.atomicityGroup !== undefined) closed.add(r.atomicityGroup);
          }
          return true;
        } catch (err) {
          return err instanceof DomainError && ['Validation', 'TooLarge'].includes(err.kind);
        }
      },
    ),
    { numRuns: 2000 },
  );
  t.pass();
});
