import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Histogram, type Registry } from 'prom-client';

/**
 * `emapi_event_loop_delay_seconds`: how long callbacks waited for the event loop, as a Prometheus
 * histogram (issue 24: one request must never hold the loop long). Each second contributes one
 * observation, the longest delay of that second: perf_hooks' `monitorEventLoopDelay` ticks every
 * RESOLUTION_MS in C++, and each second its max (less the tick itself) is observed and it is reset.
 * The buckets are cumulative, so a p99 over any window is read from two scrapes' bucket deltas:
 * "in 99 % of the seconds, no callback waited longer than that".
 *
 * prom-client's default `nodejs_eventloop_lag_*` gauges are min/max/percentiles since the previous
 * scrape (or one sample at scrape time): they cannot be added up across scrapes or processes.
 */

const NAME = 'emapi_event_loop_delay_seconds';
const RESOLUTION_MS = 10;
const SAMPLE_EVERY_MS = 1_000;
/** From 1 ms (a healthy loop) to the seconds the issue saw (11 s); finer around the 100 ms objective. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface EventLoopDelayMetric {
  stop(): void;
}

export function eventLoopDelayMetric(registry: Registry): EventLoopDelayMetric {
  const histogram = new Histogram({
    name: NAME,
    help: 'Longest event-loop delay of each second (perf_hooks monitorEventLoopDelay), one observation a second',
    buckets: BUCKETS,
    registers: [registry],
  });
  const monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  monitor.enable();
  // reset() drops the monitor's interval in progress (its next tick records nothing), so a probe
  // timer due one tick after each reset measures that gap itself: a stall there delays it too.
  let probeLateMs = 0;
  const probe = () => {
    const due = performance.now() + RESOLUTION_MS;
    probeLateMs = 0;
    setTimeout(() => (probeLateMs = Math.max(0, performance.now() - due)), RESOLUTION_MS).unref();
  };
  const sample = () => {
    const monitoredMs = monitor.count > 0 ? monitor.max / 1e6 - RESOLUTION_MS : 0;
    histogram.observe(Math.max(0, monitoredMs, probeLateMs) / 1000);
    monitor.reset();
    probe();
  };
  probe();
  // Read in the check phase: every timer already due (the monitor's tick after a stall included)
  // has run in this turn's timers phase, so the stall is in the monitor before it is reset.
  const timer = setInterval(() => setImmediate(sample), SAMPLE_EVERY_MS).unref();
  return {
    stop() {
      clearInterval(timer);
      monitor.disable();
    },
  };
}
