import test from 'ava';
import fc from 'fast-check';
import { signCommand, verifyCommand } from '../../domain/commands/command-signature';
import type { Command } from '../../domain/commands/command';
import { isWriteOrigin, type WriteOrigin } from '../../domain/commands/write-origin';
import { burstOrigins, eventBurstJob, type EventBurstData } from '../../domain/queues/job-registry';
import { ConfigError, TRACING_ENVIRONMENT, readTracingEnvironment } from '../../infra/config/environment';
import { requestFields, requestFieldsOfJob, traceContexts } from '../../workers/shared/write-origins';
import { makeEvent } from '../support/queues';

// The origin of a write (request id, W3C trace context) as it rides in commands, outbox rows and
// event jobs (DESIGN §15). Commands are signed, origin included; event jobs are not, so whatever
// Redis holds in their place must be taken harmlessly.

const hex = (length: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
const traceparent = fc.tuple(hex(32), hex(16)).map(([trace, span]) => `00-${trace}-${span}-01`);
const origin: fc.Arbitrary<WriteOrigin> = fc.record(
  {
    requestId: fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
    traceparent,
    tracestate: fc.constantFrom('vendor=1', 'a=b,c=d'),
  },
  { requiredKeys: ['requestId'] },
);
const events = (n: number) => Array.from({ length: n }, (_, i) => makeEvent('Company', 'Created', i + 1));

test('an origin is inside what the API signs: changing it breaks the signature', (t) => {
  const command: Command = {
    commandId: 'c1',
    name: 'create',
    entity: 'Company',
    subject: 's',
    issuedAt: new Date(0).toISOString(),
    origin: { requestId: 'r1', traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` },
  };
  const key = 'k'.repeat(32);
  const signed = signCommand(command, key);
  t.true(verifyCommand(JSON.parse(JSON.stringify(signed)), key));
  t.false(verifyCommand({ ...signed, origin: { ...command.origin, requestId: 'forged' } }, key));
  t.false(
    verifyCommand(
      { ...signed, origin: { requestId: 'r1', traceparent: `00-${'c'.repeat(32)}-${'b'.repeat(16)}-01` } },
      key,
    ),
  );
});

test('a burst keeps each event’s origin, in runs, and gives them back in order', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.option(origin, { nil: undefined }), { minLength: 1, maxLength: 40 }),
      fc.array(fc.nat(3), { minLength: 1, maxLength: 40 }),
      (pool, picks) => {
        // Consecutive events of one write share its origin object, as the relay gives them.
        const origins = picks.map((pick) => pool[pick % pool.length]);
        const job = eventBurstJob(events(origins.length), origins);
        const back = burstOrigins(JSON.parse(JSON.stringify(job.data)) as EventBurstData);
        t.deepEqual(
          back,
          origins.map((o) => o ?? null),
        );
        t.true((job.data.origins?.length ?? 0) <= origins.length);
      },
    ),
  );
});

test('whatever an event job carries as origins or trace, a worker reads it without failing or leaking', (t) => {
  fc.assert(
    fc.property(fc.anything(), fc.anything(), fc.integer({ min: 1, max: 5 }), (origins, trace, n) => {
      const data = { events: events(n), origins, trace } as unknown as EventBurstData;
      const read = burstOrigins(data);
      t.is(read.length, n);
      for (const entry of read) t.true(entry === null || isWriteOrigin(entry));
      const fields = requestFieldsOfJob(data);
      for (const id of [fields.requestId, ...(fields.requestIds ?? [])].filter((x) => x !== undefined)) {
        t.regex(id, /^[A-Za-z0-9._:-]{1,128}$/);
      }
      t.notThrows(() => requestFieldsOfJob(origins));
      for (const carrier of traceContexts(read)) t.regex(carrier.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    }),
  );
  // A huge count cannot make the worker build a huge array: runs stop at the burst's size.
  const forged = { events: events(2), origins: [{ origin: { requestId: 'x' }, count: 1e9 }] };
  t.deepEqual(burstOrigins(forged as unknown as EventBurstData), [{ requestId: 'x' }, { requestId: 'x' }]);
});

test('log fields: requestId for one request, requestIds for several, none without', (t) => {
  t.deepEqual(requestFields([{ requestId: 'a' }, { requestId: 'a' }, null]), { requestId: 'a' });
  t.deepEqual(requestFields([{ requestId: 'a' }, undefined, { requestId: 'b' }]), { requestIds: ['a', 'b'] });
  t.deepEqual(requestFields([null, undefined]), {});
});

test('tracing is off without an endpoint; any OTEL_* value is taken or refused with a ConfigError', (t) => {
  t.is(readTracingEnvironment({}, 'api'), undefined);
  t.is(
    readTracingEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_SDK_DISABLED: 'true' }, 'api'),
    undefined,
  );
  t.like(readTracingEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }, 'views'), {
    serviceName: 'emapi-views',
    protocol: 'http/protobuf',
    sampler: 'parentbased_always_on',
    samplerRatio: 1,
    scheduledDelayMillis: 5000,
  });
  t.throws(
    () =>
      readTracingEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'api'),
    {
      instanceOf: ConfigError,
      message: /OTEL_EXPORTER_OTLP_PROTOCOL/,
    },
  );
  const names = Object.keys(TRACING_ENVIRONMENT);
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom(...names), fc.string({ maxLength: 12 })), (env) => {
      try {
        const settings = readTracingEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', ...env }, 'api');
        if (settings) t.true(settings.samplerRatio >= 0 && settings.samplerRatio <= 1);
      } catch (err) {
        t.true(err instanceof ConfigError, String(err));
      }
    }),
  );
});
