import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Link,
  type TextMapGetter,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { getRPCMetadata, RPCType, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { TracingSettings } from '../config/environment';
import type { SpanOptions, TraceCarrier, Tracing } from './tracing-types';

/**
 * The OpenTelemetry SDK of a process, loaded only when tracing is on (infra/tracing/tracing.ts):
 * W3C trace-context propagation, spans of incoming and outgoing HTTP (and Express's route), of
 * every Postgres statement and, inside a trace only, of Redis commands, exported over OTLP/HTTP in
 * batches. Jobs carry their producer's context in their data (TraceCarrier), so a command worker's
 * and the event workers' spans join the trace of the request that made the write.
 */

function samplerOf(settings: TracingSettings): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

const carrierGetter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (key === 'traceparent' || key === 'tracestate' ? carrier[key] : undefined),
};

/** The span attribute naming a write's request id, on the API's request span and on the workers' spans. */
const REQUEST_ID_ATTRIBUTE = 'emapi.request_id';

const KINDS = { consumer: SpanKind.CONSUMER, producer: SpanKind.PRODUCER, internal: SpanKind.INTERNAL } as const;

export function startOtelSdk(settings: TracingSettings): Tracing {
  const propagator = new W3CTraceContextPropagator();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(propagator);

  // OTEL_SERVICE_NAME (read into settings) wins over a service.name in OTEL_RESOURCE_ATTRIBUTES.
  const resource = detectResources({ detectors: [envDetector, processDetector, hostDetector] }).merge(
    resourceFromAttributes({ 'service.name': settings.serviceName }),
  );
  const exporter = settings.protocol === 'http/json' ? new OTLPJsonExporter() : new OTLPProtobufExporter();
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: settings.scheduledDelayMillis })],
  });
  trace.setGlobalTracerProvider(provider);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        requireParentforOutgoingSpans: true,
        // The request id the API answered (X-Request-Id), to find a request's trace by it.
        applyCustomAttributesOnSpan: (span, _request, response) => {
          const id = 'getHeader' in response ? response.getHeader('x-request-id') : undefined;
          if (typeof id === 'string') span.setAttribute(REQUEST_ID_ATTRIBUTE, id);
        },
      }),
      new ExpressInstrumentation(),
      // SQL inside a traced request or job; the outbox sweep's polling makes no traces of its own.
      new PgInstrumentation({ requireParentSpan: true }),
      // BullMQ polls Redis all the time: only the commands of a traced piece of work make spans.
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  const tracer = provider.getTracer('entity-management-api');

  const contextOf = (carrier: TraceCarrier) => propagation.extract(ROOT_CONTEXT, carrier, carrierGetter);

  return {
    enabled: true,
    activeContext() {
      const carrier: Partial<TraceCarrier> = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent ? (carrier as TraceCarrier) : undefined;
    },
    inSpan(name, options: SpanOptions, work) {
      const parent = options.parent ? contextOf(options.parent) : ROOT_CONTEXT;
      const links: Link[] = [];
      for (const carrier of options.links ?? []) {
        const linked = trace.getSpanContext(contextOf(carrier));
        if (linked) links.push({ context: linked });
      }
      return tracer.startActiveSpan(
        name,
        {
          kind: KINDS[options.kind ?? 'internal'],
          attributes: {
            ...options.attributes,
            ...(options.requestId === undefined ? {} : { [REQUEST_ID_ATTRIBUTE]: options.requestId }),
          },
          links,
        },
        parent,
        async (span) => {
          try {
            return await work();
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
    nameRoute(route) {
      // What Express's instrumentation did from its router layers: the HTTP span takes the route.
      const metadata = getRPCMetadata(context.active());
      if (metadata?.type === RPCType.HTTP) metadata.route = route;
    },
    flush: () => provider.forceFlush(),
  };
}
