import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Comments cite the specification and the design record as `spec §4.3` or `DESIGN §13`. Both live
 * in the repository (docs/spec/, copies of the shared originals), and every citation must name a
 * section (`## 4.` / `### 4.3`) or a numbered item of one (`§5.6`: item 6 of section 5) that exists.
 */

const root = path.resolve(__dirname, '../../..');
const DOCS = {
  spec: readFileSync(path.join(root, 'docs/spec/entity-management-api.md'), 'utf8'),
  DESIGN: readFileSync(path.join(root, 'docs/spec/DESIGN.md'), 'utf8'),
};

/** The text of section `n` (from its `## n.` heading to the next `## `), or undefined. */
function section(doc: string, n: string): string | undefined {
  const start = doc.search(new RegExp(`^## ${n}\\. `, 'm'));
  if (start < 0) return undefined;
  const next = doc.slice(start + 3).search(/^## /m);
  return next < 0 ? doc.slice(start) : doc.slice(start, start + 3 + next);
}

function resolves(doc: string, ref: string): boolean {
  const [major, minor] = ref.split('.');
  const body = section(doc, major!);
  if (!body) return false;
  if (minor === undefined) return true;
  return new RegExp(`^### ${major}\\.${minor}\\b`, 'm').test(body) || new RegExp(`^${minor}\\. `, 'm').test(body);
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sources(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}

test('every spec § and DESIGN § citation in the code names a section that exists in docs/spec/', (t) => {
  const broken: string[] = [];
  let checked = 0;
  for (const dir of ['api', 'workers', 'db', 'domain', 'infra', 'scripts', 'bench', 'test']) {
    for (const file of sources(path.join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\b(spec|DESIGN) §(\d+(?:\.\d+)?)/g)) {
        checked += 1;
        if (!resolves(DOCS[m[1] as keyof typeof DOCS], m[2]!)) broken.push(`${path.relative(root, file)}: ${m[0]}`);
      }
    }
  }
  t.true(checked > 100, `${checked} citations found`);
  t.deepEqual(broken, []);
});

test('the resolver itself: real sections and items resolve, made-up ones do not', (t) => {
  t.true(resolves(DOCS.spec, '4.3'));
  t.true(resolves(DOCS.spec, '5.6'));
  t.true(resolves(DOCS.DESIGN, '13'));
  t.false(resolves(DOCS.spec, '5.9'));
  t.false(resolves(DOCS.DESIGN, '42'));
});
