import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How each process kind is started, read from package.json's scripts (`npm run api`,
 * `npm run worker:commands`, …) so the supervisor, the benchmark and the container files all run
 * a process the same way, V8 flags included.
 */

// Compiled to dist/scripts/: the project root is two levels up.
export const PROJECT_ROOT = path.resolve(__dirname, '../..');

export const PROCESS_SCRIPTS = {
  api: 'api',
  commands: 'worker:commands',
  views: 'worker:views',
  notifications: 'worker:notifications',
} as const;

export type ProcessKind = keyof typeof PROCESS_SCRIPTS;

/** The node arguments of a process kind: its flags, then its entry file (absolute). */
export function nodeArgsOf(kind: ProcessKind): string[] {
  const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const script = pkg.scripts[PROCESS_SCRIPTS[kind]];
  const words = script?.trim().split(/\s+/) ?? [];
  if (words[0] !== 'node' || words.length < 2) {
    throw new Error(`package.json script ${PROCESS_SCRIPTS[kind]} must be "node [flags] <file>", not ${script}`);
  }
  const args = words.slice(1);
  const file = args.pop()!;
  return [...args, path.join(PROJECT_ROOT, file)];
}
