import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The one-place rule of the configuration (issue 25): the service's code reads the environment only
 * in infra/config/, through the declarations of environment.ts, so every variable has one name,
 * parser, default and documentation line. This reads the sources' syntax (comments and strings do
 * not count), so a `process.env` anywhere else in the service fails here. scripts/ (tooling) and the
 * suite and benchmark (which start processes with environments of their own) are not the service.
 */

const root = path.resolve(__dirname, '../../..');
const SERVICE = ['api', 'workers', 'domain', 'db', 'infra'];
const READER = 'infra/config/';

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourcesUnder(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

const isProcess = (node: ts.Expression) => /(^|\.)process$/.test(node.getText());

/** Each `process.env`, `process['env']` and `{ env } = process` of a source, as `file:line: text`. */
function environmentReads(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node) =>
    `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`;
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'env' && isProcess(node.expression)) {
      found.push(at(node));
    } else if (
      ts.isElementAccessExpression(node) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      node.argumentExpression.text === 'env' &&
      isProcess(node.expression)
    ) {
      found.push(at(node));
    } else if (
      ts.isVariableDeclaration(node) &&
      ts.isObjectBindingPattern(node.name) &&
      node.initializer &&
      isProcess(node.initializer) &&
      node.name.elements.some((element) => (element.propertyName ?? element.name).getText() === 'env')
    ) {
      found.push(at(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('no file of the service outside infra/config/ reads process.env', (t) => {
  const files = SERVICE.flatMap(sourcesUnder);
  t.true(files.length > 100, `only ${files.length} sources found`);
  const outside = files.filter((file) => !file.startsWith(READER));
  const found = outside.flatMap((file) => environmentReads(file, readFileSync(path.join(root, file), 'utf8')));
  t.deepEqual(found, []);
  // The scan sees the reads infra/config/ makes, so it would see one elsewhere.
  const inside = files.filter((file) => file.startsWith(READER));
  t.true(inside.some((file) => environmentReads(file, readFileSync(path.join(root, file), 'utf8')).length > 0));
});

test('the rule can fail: each way of reading the environment is caught, a mention is not', (t) => {
  const reads = [
    'const level = process.env.LOG_LEVEL;',
    "const level = process.env['LOG_LEVEL'];",
    'const env = process.env;',
    "const level = process['env'].LOG_LEVEL;",
    'const { env } = process;',
    'const { env: vars } = process;',
    'const level = globalThis.process.env.LOG_LEVEL;',
    'export function f(env = process.env) { return env; }',
  ];
  for (const line of reads) t.is(environmentReads('x.ts', line).length, 1, line);
  for (const line of [
    '// falls back to process.env for any option left undefined',
    "const said = 'process.env is read in infra/config only';",
    'const { argv } = process;',
    'const env = options.env;',
  ]) {
    t.deepEqual(environmentReads('x.ts', line), [], line);
  }
});
