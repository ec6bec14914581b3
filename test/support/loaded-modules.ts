import Module from 'node:module';
import path from 'node:path';

/**
 * Preloaded (`node --require`) into a process a test spawns: on SIGUSR2 it writes one JSON line
 * saying which OpenTelemetry modules the process has loaded (the inert API package aside), what is
 * registered with the OpenTelemetry API, and whether anything has replaced `require` since start
 * (how instrumentations hook the modules they trace). Tracing off must show none of these.
 */

const originalRequire = Module.prototype.require;
const OTEL = `${path.sep}@opentelemetry${path.sep}`;
// The API package alone is inert (no-op tracer, nothing patched); prom-client requires it for exemplars.
const OTEL_API = `${OTEL}api${path.sep}`;
/** Where the OpenTelemetry API (1.x) keeps what an SDK registers: tracer provider, propagator, context manager. */
const OTEL_GLOBALS = Symbol.for('opentelemetry.js.api.1');

process.on('SIGUSR2', () => {
  const otel = Object.keys(require.cache).filter((file) => file.includes(OTEL) && !file.includes(OTEL_API));
  const globals = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[OTEL_GLOBALS] ?? {};
  const report = {
    loadedModules: true,
    pid: process.pid,
    otelModules: otel.length,
    someOtelModules: otel.slice(0, 3),
    otelGlobals: Object.keys(globals).filter((name) => name !== 'version'),
    requirePatched: Module.prototype.require !== originalRequire,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
});
