import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * HTTP only at the API's edge (issue 25 item 4): `domain/`, `db/` and `workers/` return results and
 * errors as data (domain/results, domain/errors); `api/http/` alone turns them into statuses,
 * headers and bodies. This reads their sources' syntax (comments are free to talk about HTTP) and
 * fails on what building a response looks like: a response header's name, a status number given
 * or compared, the status table, a `rel="next"` link. (Imports of api/ are eslint's to refuse.)
 */

const root = path.resolve(__dirname, '../../..');
const LAYERS = ['domain', 'db', 'workers'];

/** Response headers the API sends; their names are the edge's business. */
const RESPONSE_HEADERS = new Set([
  'content-type',
  'x-total-count',
  'link',
  'etag',
  'location',
  'retry-after',
  'allow',
  'www-authenticate',
  'x-consistency-token',
  'preference-applied',
]);

/** Request headers given as data, not answers: the example `$batch` of DESIGN §12 sends a PATCH's media type. */
const ALLOWED = new Set(['domain/batch/batch-example.ts: Content-Type']);

const isStatus = (node: ts.Node): boolean => {
  if (!ts.isNumericLiteral(node)) return false;
  const n = Number(node.text);
  return Number.isInteger(n) && n >= 100 && n <= 599;
};

const named = (node: ts.Node, names: readonly string[]): boolean =>
  (ts.isPropertyAccessExpression(node) && names.includes(node.name.text)) ||
  (ts.isIdentifier(node) && names.includes(node.text));

/** What in `text` builds HTTP, as `file:line: what`. */
function httpConstructs(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    if (ALLOWED.has(`${file}: ${what.replace(/^a response header: /, '')}`)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push(`${file}:${line}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) {
      if (RESPONSE_HEADERS.has(node.text.toLowerCase())) report(node, `a response header: ${node.text}`);
      if (node.text.includes('rel="next"')) report(node, 'a Link header value');
    }
    if (ts.isIdentifier(node) && node.text === 'STATUS_OF') report(node, 'the status table');
    // `{ status: 200 }`, `{ statusCode: 304 }`
    if (ts.isPropertyAssignment(node) && named(node.name, ['status', 'statusCode']) && isStatus(node.initializer)) {
      report(node, `a status: ${node.getText(source)}`);
    }
    // `answer.status >= 400`, `res.statusCode = 204`
    if (
      ts.isBinaryExpression(node) &&
      ((named(node.left, ['status', 'statusCode']) && isStatus(node.right)) ||
        (named(node.right, ['status', 'statusCode']) && isStatus(node.left)))
    ) {
      report(node, `a status: ${node.getText(source)}`);
    }
    // `res.status(404)`
    if (ts.isCallExpression(node) && named(node.expression, ['status']) && node.arguments.some(isStatus)) {
      report(node, `a status: ${node.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourcesUnder(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

test('domain/, db/ and workers/ build no HTTP status, header or link', (t) => {
  const files = LAYERS.flatMap(sourcesUnder);
  t.true(files.length > 100, `only ${files.length} sources found`);
  const found = files.flatMap((file) => httpConstructs(file, readFileSync(path.join(root, file), 'utf8')));
  t.deepEqual(found, []);
});

test('the rule can fail: each way of building HTTP is caught, and comments and messages are not', (t) => {
  const built = [
    "const headers = { 'content-type': JSON_TYPE };",
    "headers['x-total-count'] = String(total);",
    "headers['ETag'] = tag;",
    'if (link) headers["link"] = link;',
    'return `</${route}?${query}>; rel="next"`;',
    'return { status: 304, headers: { etag } };',
    'const answer = { statusCode: 201 };',
    'if (answer.status >= 400) failed.add(id);',
    'if (500 <= res.statusCode) return;',
    'res.status(404).end();',
    "import { STATUS_OF } from './problem-status';",
    "answer.headers['x-consistency-token'] = token;",
  ];
  for (const line of built) t.true(httpConstructs('x.ts', line).length > 0, line);
  const fine = [
    '/** Sends `Content-Type: text/plain` and `ETag`, 304 when status: 304 fits. */ const x = 1;',
    "throw badRequest('X-Consistency-Token: not a token this service issued');",
    'throw preconditionFailed(`If-Match ${header} does not match its ETag ${tag}.`);',
    'const limit = { maxTop: 500 };',
    "if (step.method !== 'GET') writes.add(step.id);",
    "const result = { kind: 'count', n: 404 };",
  ];
  for (const line of fine) t.deepEqual(httpConstructs('x.ts', line), [], line);
});
