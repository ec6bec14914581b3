import path from 'node:path';

/**
 * What a failed job keeps for /Jobs and Bull Board (its `failedReason` and `stacktrace`): never SQL
 * text or database detail, never an absolute path of this machine (issue 24, finding 7). The full
 * error goes to the worker's log with the job's id instead.
 */

/** BullMQ's control-flow errors move a job on purpose: they are passed through untouched. */
const CONTROL_ERRORS = new Set(['DelayedError', 'WaitingError', 'WaitingChildrenError', 'RateLimitError']);

/** The project's root: the compiled code runs from `<root>/dist/workers/shared`. */
const ROOT = ((dir: string) => (path.basename(dir) === 'dist' ? path.dirname(dir) : dir))(
  path.resolve(__dirname, '../..'),
);

/** A Postgres error as the pg driver raises it (knex puts the statement in front of its message). */
function sqlState(err: unknown): string | undefined {
  const { code, severity } = (err ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string' ? code : undefined;
}

/** Statement text, or the wording of Postgres' own messages about relations and constraints. */
const SQL_TEXT =
  /\b(insert\s+into|delete\s+from|update\s+"?\w+"?\s+set|select\s[\s\S]*?\sfrom|violates\s+\w+|relation\s+"|column\s+"|syntax\s+error\s+at)\b/i;

/** `at f (/abs/root/workers/x.ts:1:2)` → `at f (workers/x.ts:1:2)`; a path outside the project keeps its file name only. */
function relativeFrames(stack: string | undefined): string[] {
  const frames = (stack ?? '').split('\n').filter((line) => /^\s+at\s/.test(line));
  return frames.map((line) =>
    line.replace(
      /(^|[\s(])(?:file:\/\/)?(\/[^\s()]+)/g,
      (_match, before: string, absolute: string) =>
        before + (absolute.startsWith(`${ROOT}/`) ? absolute.slice(ROOT.length + 1) : `…/${path.basename(absolute)}`),
    ),
  );
}

export interface PublicFailure {
  /** What the job is failed with. */
  error: Error;
  /** True when the reason was replaced: the original is worth logging. */
  withheld: boolean;
}

/** The error a job is failed with, in place of `err`, for job `jobId`. */
export function publicFailure(err: unknown, jobId: string | undefined): PublicFailure {
  if (err instanceof Error && CONTROL_ERRORS.has(err.name)) return { error: err, withheld: false };
  const original = err instanceof Error ? err.message : String(err);
  const state = sqlState(err);
  const withheld = state !== undefined || SQL_TEXT.test(original);
  const where = `the details are in the worker log under job ${jobId ?? '?'}`;
  const message = state
    ? `a database error (SQLSTATE ${state}); ${where}`
    : withheld
      ? `an error whose text is withheld (it quoted SQL); ${where}`
      : original.split(ROOT).join('.');
  const error = new Error(message);
  // The name is kept: BullMQ knows UnrecoverableError by it.
  error.name = err instanceof Error ? err.name : 'Error';
  error.stack = [`${error.name}: ${message}`, ...relativeFrames(err instanceof Error ? err.stack : undefined)].join(
    '\n',
  );
  return { error, withheld };
}
