import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * A request inside a `$batch` passes the steps of the same request alone (issue 25 item 2): each
 * step has one home, which the lone handler and the batch both call. This fails when a step is
 * called from anywhere else in its layer, e.g. a batch that validates bodies or runs handlers of
 * its own again.
 */

const root = path.resolve(__dirname, '../../..');

/** A step, the one file of its folder that calls it, and the folder. */
const STEPS: { call: RegExp; home: string; folder: string }[] = [
  // A write request's key, media type and body become its command in one builder.
  { call: /\bparseWriteBody\(/, home: 'api/entities/write-command.ts', folder: 'api' },
  { call: /\bparsePatch\(/, home: 'api/entities/write-command.ts', folder: 'api' },
  { call: /\bunsupportedMediaType\(/, home: 'api/entities/write-command.ts', folder: 'api/entities' },
  // A write's handler runs in one handler call, for a lone command and for each write of a group.
  { call: /\bHANDLERS\[/, home: 'workers/commands/command-runner.ts', folder: 'workers' },
];

function sourcesUnder(folder: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')));
}

/** Code lines only: what a comment says is free. */
function codeLines(file: string): string[] {
  return readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line));
}

for (const { call, home, folder } of STEPS) {
  test(`${call.source} is called in ${folder}/ from ${home} only`, (t) => {
    const callers = sourcesUnder(folder).filter((file) => codeLines(file).some((line) => call.test(line)));
    t.deepEqual(
      callers.filter((file) => file !== home),
      [],
    );
    t.deepEqual(callers, [home]);
  });
}
