import test from 'ava';
import fc from 'fast-check';
import {
  jsonTextPieces,
  signCommand,
  signCommandInSlices,
  verifyCommand,
} from '../../domain/commands/command-signature';
import { requestHash, requestHashInSlices } from '../../domain/writes/command-ids';
import { jsonByteLengthExceeds } from '../../domain/json/json-size';
import { parseJsonInSlices } from '../../api/http/json-in-slices';
import { batchResponseText, batchResponseTextInSlices } from '../../api/http/batch-answer';
import { recordedBatch, type BatchEntry } from '../../domain/batch/batch-command';

// A `$batch` of up to 16 MiB is parsed, measured, fingerprinted and signed a slice at a time so
// that it never holds the API's event loop in one call (issue 24). Each sliced function must give
// exactly what the one-call function it replaces gives: the worker verifies the text BullMQ stored
// in one piece, a repeated Idempotency-Key compares fingerprints, a client's JSON is JSON.parse's.

const key = 'k'.repeat(32);

/** JSON data as a command holds it, with the members JSON leaves out or turns into null. */
const member = fc.oneof(
  fc.jsonValue(),
  fc.constant(undefined),
  fc.array(fc.oneof(fc.jsonValue(), fc.constant(undefined)), { maxLength: 8 }),
);
const command = fc
  .tuple(fc.uuid(), fc.string(), fc.dictionary(fc.string(), member, { maxKeys: 6 }))
  .map(([commandId, subject, rest]) => ({ ...rest, commandId, subject }));

test('the pieces of a command joined are its JSON text, byte for byte', (t) => {
  fc.assert(
    fc.property(command, (value) => {
      t.is([...jsonTextPieces(value)].join(''), JSON.stringify(value));
    }),
  );
});

test('a command signed in slices carries the signature signed at once, and verifies as BullMQ stores it', async (t) => {
  await fc.assert(
    fc.asyncProperty(command, async (value) => {
      let pauses = 0;
      const sliced = await signCommandInSlices(value, key, async () => void (pauses += 1));
      t.is(sliced.signature, signCommand(value, key).signature);
      t.true(verifyCommand(JSON.parse(JSON.stringify(sliced)), key));
      t.true(pauses > 0);
    }),
  );
});

test('a batch’s steps are hashed one at a time, and a changed step no longer verifies', async (t) => {
  const steps = Array.from({ length: 50 }, (_, i) => ({ id: String(i), body: { Name: `n${i}` } }));
  const batch = { commandId: 'c1', subject: 's', name: 'batch', steps };
  let pauses = 0;
  const signed = await signCommandInSlices(batch, key, async () => void (pauses += 1));
  t.true(pauses >= steps.length, 'the event loop may be given up between any two steps');
  const altered = { ...signed, steps: signed.steps.map((s, i) => (i === 49 ? { ...s, body: { Name: 'x' } } : s)) };
  t.false(verifyCommand(altered, key));
});

const noPause = async () => {};

/** What JSON.parse makes of `text`, as the body parser answers it (an empty body is `{}`). */
function parsed(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: text.length === 0 ? {} : JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

test('a body parsed in slices is JSON.parse’s value, and what JSON.parse refuses is refused', async (t) => {
  const text = fc.oneof(
    fc.json(),
    fc.string(),
    fc.json().map((json) => `${json} x`),
    fc.json().chain((json) => fc.nat(json.length).map((cut) => json.slice(0, cut))),
  );
  await fc.assert(
    fc.asyncProperty(text, async (body) => {
      const expected = parsed(body);
      const actual = await parseJsonInSlices(Buffer.from(body), noPause).then(
        (value) => ({ ok: true as const, value }),
        () => ({ ok: false as const }),
      );
      t.deepEqual(actual, expected, JSON.stringify(body));
    }),
    { numRuns: 2000 },
  );
});

test('a 2 MiB body is parsed 64 KiB at a time, with a turn for others between slices', async (t) => {
  const requests = Array.from({ length: 400 }, (_, i) => ({
    id: String(i),
    method: 'POST',
    url: 'Companies',
    body: { CompanyName: 'x'.repeat(5000) },
  }));
  const body = Buffer.from(JSON.stringify({ requests }));
  let pauses = 0;
  const value = await parseJsonInSlices(body, async () => void (pauses += 1));
  t.deepEqual(value, { requests });
  t.is(pauses, Math.ceil(body.length / (64 * 1024)));
});

test('the size of a body is judged exactly, without serialising more of it than the limit', (t) => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.nat(400), (value, limit) => {
      t.is(jsonByteLengthExceeds(value, limit), Buffer.byteLength(JSON.stringify(value)) > limit);
    }),
    { numRuns: 5000 },
  );
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  // 200,000 brackets each side of a 1: 400,001 bytes, nested deeper than any recursion could go.
  t.false(jsonByteLengthExceeds(deep, 400_001), 'nesting deeper than the stack is measured, not thrown');
  t.true(jsonByteLengthExceeds(deep, 400_000));
  t.false(jsonByteLengthExceeds({ Name: 'é'.repeat(100) }, 211));
  t.true(jsonByteLengthExceeds({ Name: 'é'.repeat(100) }, 210), 'two bytes for each é');
});

test('a batch fingerprinted in slices has the fingerprint of the same body at once', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), async (body) => {
      t.is(await requestHashInSlices('POST', '$batch', body, noPause), requestHash('POST', '$batch', body));
    }),
  );
});

test('a string parsed in slices keeps a surrogate pair cut by a slice boundary whole', async (t) => {
  const value = { text: `${'a'.repeat(64 * 1024 - 10)}😀${'é'.repeat(70_000)}😀` };
  let pauses = 0;
  t.deepEqual(await parseJsonInSlices(JSON.stringify(value), async () => void (pauses += 1)), value);
  t.true(pauses >= 2);
  await fc.assert(
    fc.asyncProperty(fc.json(), async (text) => {
      t.deepEqual(await parseJsonInSlices(text, noPause), parsed(text).ok ? JSON.parse(text) : undefined);
    }),
  );
});

test('a finished batch rendered in slices is the batch rendered at once', async (t) => {
  const entries: BatchEntry[] = [
    {
      id: 'r1',
      result: {
        kind: 'page',
        json: '[{"Id":"a","Name":"😀"}]',
        total: { n: 1, limited: false },
        next: '/Schemes?$skip=1',
      },
    },
    { id: 'r2', result: { kind: 'count', n: 7, limited: false } },
    { id: 'r3', result: { kind: 'entity', json: '{"Id":"b"}', tag: '"3"' } },
    { id: 'r4\u0000', result: { kind: 'unchanged', tag: '"3"' } },
  ];
  const recorded = recordedBatch(entries, '16/B374D848');
  const sliced = await batchResponseTextInSlices(recorded, noPause);
  t.is(sliced, batchResponseText(recorded));
  t.is((JSON.parse(sliced) as { responses: unknown[] }).responses.length, 4);
  t.is(
    await batchResponseTextInSlices({ ok: true, batch: true, responses: '{"responses":[]}' }, noPause),
    '{"responses":[]}',
  );
});
