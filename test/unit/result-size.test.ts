import test from 'ava';
import fc from 'fast-check';
import type { FailureKind } from '../../domain/errors/domain-error';
import { bodyBytesOf, failedResult, type RequestResult } from '../../domain/results/request-result';
import { answerOf } from '../../api/http/answer';
import { STATUS_OF } from '../../api/http/problem-status';

/**
 * A `$batch` spends MAX_RESPONSE_BYTES in its worker from results (domain/results), before the API
 * renders them: the size it counts must never be below what the API then sends, or a batch
 * response could exceed the limit. Exact for reads and writes, a bound for problems.
 */

const rendered = (result: RequestResult) => Buffer.byteLength(answerOf(result, '16/B374D848').body ?? '');

const message = fc.string({ unit: 'binary', maxLength: 300 });

test('a failure counts at least the bytes of its problem body, for every kind and any messages', (t) => {
  const kinds = Object.keys(STATUS_OF) as FailureKind[];
  fc.assert(
    fc.property(
      fc.constantFrom(...kinds),
      fc.array(message, { maxLength: 20 }),
      fc.option(fc.integer({ min: 0, max: 1e9 }), { nil: undefined }),
      (kind, errors, retryAfter) => {
        const result = failedResult({ kind, errors, ...(retryAfter === undefined ? {} : { retryAfter }) });
        const counted = bodyBytesOf(result);
        const sent = rendered(result);
        t.true(sent <= counted, `${kind}: ${sent} sent, ${counted} counted`);
      },
    ),
  );
});

test('reads and writes count exactly the bytes of their bodies', (t) => {
  const json = fc.json().map((text) => text);
  const results = fc.oneof(
    fc.record({
      kind: fc.constant('page' as const),
      json,
      total: fc.record({ n: fc.nat(), limited: fc.boolean() }),
      next: fc.constant('/Schemes?$skip=2'),
    }),
    fc.record({ kind: fc.constant('count' as const), n: fc.nat(), limited: fc.boolean() }),
    fc.record({ kind: fc.constant('entity' as const), json, tag: fc.constant('"3"') }),
    fc.record({ kind: fc.constant('unchanged' as const), tag: fc.constant('"3"') }),
    fc.record({
      kind: fc.constant('written' as const),
      change: fc.constantFrom('created' as const, 'updated' as const, 'deleted' as const),
      entity: fc.constant('Company'),
      encodedId: fc.constant('h1am3Q'),
      version: fc.nat(),
      representation: fc.option(fc.record({ json, version: fc.nat() }), { nil: undefined }),
    }),
  );
  fc.assert(
    fc.property(results, (result) => {
      t.is(bodyBytesOf(result), rendered(result), JSON.stringify(result));
    }),
  );
});
