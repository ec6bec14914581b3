import { tracingSettings } from '../config/environment';
import type { Tracing } from './tracing-types';

/**
 * OpenTelemetry tracing (DESIGN §15), on when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set and OTEL_SDK_DISABLED is not `true`. Off, it costs
 * nothing: this module imports no OpenTelemetry package, nothing patches `require`, and the code
 * that carries trace context calls the no-op below. On, `startTracing` loads the SDK and the
 * instrumentations (./otel-sdk.ts) by dynamic import, before the entry point loads express, pg or
 * ioredis, so their instrumentations hook them.
 */

const OFF: Tracing = {
  enabled: false,
  activeContext: () => undefined,
  inSpan: (_name, _options, work) => work(),
  nameRoute: () => undefined,
  flush: () => Promise.resolve(),
};

let current: Tracing = OFF;

/** The process's tracing: the SDK's once `startTracing` turned it on, the no-op otherwise. */
export function tracing(): Tracing {
  return current;
}

/**
 * Turns tracing on for this process when the environment says so; first thing in every entry
 * point, which loads the rest of the process only after this resolves. `component` names the
 * process kind (`api`, `commands`, …): the service name is `emapi-<component>` unless
 * OTEL_SERVICE_NAME is set.
 */
export async function startTracing(component: string): Promise<void> {
  // An invalid OTEL_* value throws a ConfigError: the process refuses to start, as for any setting.
  const settings = tracingSettings(component);
  if (!settings) return;
  const { startOtelSdk } = await import('./otel-sdk');
  current = startOtelSdk(settings);
}

/**
 * An entry point: tracing first (when on), then `load`, which imports the process's own modules,
 * so the instrumentations hook express, pg and ioredis before anything requires them.
 */
export function startProcess(component: string, load: () => Promise<unknown>): void {
  startTracing(component)
    .then(load)
    .catch((err: unknown) => {
      console.error(`[${component}] failed to start: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
}
