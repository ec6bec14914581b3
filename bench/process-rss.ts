import { readFileSync } from 'node:fs';

/**
 * Resident memory of a process sampled from /proc/<pid>/status every 100 ms: the peak over the
 * whole run and per window, and the latest sample (for start / end figures). Linux only.
 */

export interface RssSampler {
  peakMiB: () => number;
  /** Starts a window; the function returned gives the peak since. */
  window: () => () => number;
  /** The latest sample, MiB (0 before the first or once the process is gone). */
  currentMiB: () => number;
  stop: () => void;
}

/** The process's resident memory now, MiB (0 when it cannot be read). */
export function rssMiBOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0; // process gone
  }
}

export function rssSampler(pid: number): RssSampler {
  let peak = 0;
  let windowPeak = 0;
  let current = rssMiBOf(pid);
  const timer = setInterval(() => {
    const mib = rssMiBOf(pid);
    if (mib === 0) return;
    current = mib;
    peak = Math.max(peak, mib);
    windowPeak = Math.max(windowPeak, mib);
  }, 100);
  return {
    peakMiB: () => peak,
    window: () => {
      windowPeak = 0;
      return () => Math.round(windowPeak);
    },
    currentMiB: () => current,
    stop: () => clearInterval(timer),
  };
}
