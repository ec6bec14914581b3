import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of processes from /proc/<pid>/stat (utime + stime), for the benchmark's CPU per write
 * per process. A tracked process may count its descendants (the backends of a Postgres server, the
 * processes of a cluster) and the children it has reaped since (cutime + cstime: backends that
 * exited during the run). Linux only; a process that cannot be read counts as absent.
 */

export interface TrackedProcess {
  /** Row label: "API", "Postgres (all backends)", … */
  label: string;
  pid: number;
  withDescendants: boolean;
}

interface Stat {
  ppid: number;
  /** utime + stime, clock ticks. */
  own: number;
  /** cutime + cstime: reaped children, clock ticks. */
  reaped: number;
}

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function statOf(pid: string): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined; // gone between listing and reading
  }
}

function allStats(): Map<number, Stat> {
  const out = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(name);
    if (stat) out.set(Number(name), stat);
  }
  return out;
}

/** A process and all its descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, s] of allStats()) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

/** CPU milliseconds used so far by each of `pids` (absent when gone). */
export function cpuMsOfPids(pids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const stat = statOf(String(pid));
    if (stat) out.set(pid, (stat.own * 1000) / TICKS_PER_SECOND);
  }
  return out;
}

/** CPU milliseconds used so far by each tracked process (null when it cannot be read). */
function cpuMsOf(tracked: readonly TrackedProcess[]): Map<string, number | null> {
  const stats = allStats();
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  const out = new Map<string, number | null>();
  for (const p of tracked) {
    const root = stats.get(p.pid);
    if (!root) {
      out.set(p.label, null);
      continue;
    }
    let ticks = root.own;
    if (p.withDescendants) {
      ticks += root.reaped;
      const stack = [...(children.get(p.pid) ?? [])];
      for (let pid = stack.pop(); pid !== undefined; pid = stack.pop()) {
        ticks += stats.get(pid)!.own;
        stack.push(...(children.get(pid) ?? []));
      }
    }
    out.set(p.label, (ticks * 1000) / TICKS_PER_SECOND);
  }
  return out;
}

export interface CpuPerRequest {
  requests: number;
  /** Length of the window, wall clock. */
  seconds: number;
  /** CPU ms per request by process label (null: not measurable, e.g. a remote database). */
  perProcess: Record<string, number | null>;
  total: number;
}

/** Starts counting; the function returned divides what each process used since by `requests`. */
export function cpuWindow(tracked: readonly TrackedProcess[]): (requests: number) => CpuPerRequest {
  const before = cpuMsOf(tracked);
  const started = Date.now();
  return (requests) => {
    const after = cpuMsOf(tracked);
    const seconds = (Date.now() - started) / 1000;
    const perProcess: Record<string, number | null> = {};
    let total = 0;
    for (const p of tracked) {
      const a = after.get(p.label);
      const b = before.get(p.label);
      const ms = a == null || b == null || requests === 0 ? null : (a - b) / requests;
      perProcess[p.label] = ms === null ? null : Number(ms.toFixed(2));
      total += ms ?? 0;
    }
    return { requests, seconds, perProcess, total: Number(total.toFixed(2)) };
  };
}
