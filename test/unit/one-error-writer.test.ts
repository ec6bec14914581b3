import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The one-place rule of the error model (issue 11): routes and middleware only throw (or pass to
 * `next`) a DomainError; `api/http/error-handler.ts` alone writes problem bodies and their headers.
 * This reads the sources, so a new inline error answer anywhere under api/ fails here.
 */

const root = path.resolve(__dirname, '../../..');
/**
 * answer.ts renders a failure's problem and headers for the error handler and for each request of a
 * `$batch`; client-errors.ts answers on the raw socket, below Express, where no Response exists to
 * throw to.
 */
const WRITERS = new Set([
  'api/http/error-handler.ts',
  'api/http/problem-status.ts',
  'api/http/answer.ts',
  'api/http/client-errors.ts',
]);
/** The OpenAPI document names every problem and error header to describe them; it answers nothing. */
const DESCRIBERS = new Set(['api/openapi/document.ts']);
/** The dispatcher answers `OPTIONS` with 200 and `Allow` (as Express's router did): a success, not an error. */
const OPTIONS_ANSWER = { file: 'api/routes/dispatch.ts', line: /^res\.setHeader\('Allow', allow\);$/ };

/** What writing an error answer yourself looks like. */
const FORBIDDEN: readonly [RegExp, string][] = [
  [/sendProblem\(/, 'sendProblem('],
  [/\bproblem\(/, 'problem('],
  [/\.status\(\s*[45]/, '.status(4xx/5xx)'],
  [/\.sendStatus\(/, '.sendStatus('],
  [/statusCode\s*=\s*[45]/, 'statusCode = 4xx/5xx'],
  [/Object\.assign\(\s*new Error/, 'Object.assign(new Error'],
  [/application\/problem\+json/, 'application/problem+json'],
  [/['"](Retry-After|Allow|WWW-Authenticate)['"]/i, 'an error header'],
];

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourcesUnder(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

function inlineErrorAnswers(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      FORBIDDEN.filter(([pattern]) => pattern.test(line)).map(
        ([, what]) => `${file}:${i + 1}: ${what}: ${line.trim()}`,
      ),
    );
}

test('no file under api/ but the error handler writes an error answer', (t) => {
  const files = sourcesUnder('api').filter((file) => !WRITERS.has(file) && !DESCRIBERS.has(file));
  t.true(files.length > 20, `only ${files.length} sources found under api/`);
  const found = files
    .flatMap((file) => inlineErrorAnswers(file, readFileSync(path.join(root, file), 'utf8')))
    .filter((hit) => {
      const [where, , ...code] = hit.split(': ');
      return !(where!.startsWith(`${OPTIONS_ANSWER.file}:`) && OPTIONS_ANSWER.line.test(code.join(': ')));
    });
  t.deepEqual(found, []);
});

test('the rule can fail: each way of answering an error inline is caught', (t) => {
  const inline = [
    "sendProblem(res, problem(503, 'Service Unavailable', 'down'));",
    'res.status(415).json({});',
    'res.status(503).end();',
    'res.sendStatus(405);',
    'res.statusCode = 401;',
    "throw Object.assign(new Error('read-only'), { status: 405 });",
    "res.type('application/problem+json');",
    "res.setHeader('Retry-After', '5');",
    "res.set('Allow', 'GET');",
    "res.setHeader('WWW-Authenticate', 'Bearer');",
  ];
  for (const line of inline) t.is(inlineErrorAnswers('x.ts', line).length > 0, true, line);
  for (const line of ['res.status(202).json(entry);', 'res.status(201).end();', "res.setHeader('ETag', etag);"]) {
    t.deepEqual(inlineErrorAnswers('x.ts', line), [], line);
  }
});
