import test from 'ava';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The README sends newcomers to docs/*.md, and the manuals point at each other's sections: every
 * relative markdown link in them must name a file that exists and, with `#anchor`, a heading of
 * that file (GitHub's anchors). A section renamed or moved without its links fails here.
 */

const root = path.resolve(__dirname, '../../..');

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a markdown file offers (a repeated heading gets -1, -2, … as on GitHub). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, text] of markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(text!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

/** How the checker sees files: the disk, or a few texts in its own test. */
interface Files {
  read(file: string): string;
  exists(file: string): boolean;
}
const disk: Files = { read: (file) => readFileSync(file, 'utf8'), exists: existsSync };

/** The relative links of one file that do not resolve, as `file: target`. */
function brokenLinks(file: string, files: Files = disk): string[] {
  const broken: string[] = [];
  for (const [, target] of prose(files.read(file)).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // http:, https:, mailto:
    const [pathPart, anchor] = target!.split('#') as [string, string | undefined];
    const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
    const where = `${path.relative(root, file)}: ${target}`;
    if (!files.exists(resolved)) {
      broken.push(`${where} (no such file)`);
    } else if (anchor !== undefined) {
      if (!resolved.endsWith('.md')) continue;
      if (!anchors(files.read(resolved)).has(decodeURIComponent(anchor).toLowerCase()))
        broken.push(`${where} (no such heading)`);
    }
  }
  return broken;
}

const documents = [
  path.join(root, 'README.md'),
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(root, 'docs', name)),
];

test('every relative link in README.md and docs/*.md names a file and heading that exist', (t) => {
  t.true(documents.length >= 6, documents.join(', '));
  t.deepEqual(
    documents.flatMap((file) => brokenLinks(file)),
    [],
  );
});

test('the README links every manual in docs/', (t) => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  for (const file of documents.slice(1)) {
    const name = `docs/${path.basename(file)}`;
    t.true(readme.includes(`](${name}`), `README.md links ${name}`);
  }
});

test('the checker itself: a missing file, a missing heading and a heading that exists', (t) => {
  const file = path.join(root, 'docs', 'example.md');
  const texts: Record<string, string> = {
    [file]: [
      '# Example',
      '## Bulk writes: `POST /$batch`',
      '## Issue 16 — webhooks: delivery latency — 2026-11-23',
      '## Twice',
      '## Twice',
      '[ok](#bulk-writes-post-batch) [ok](#issue-16--webhooks-delivery-latency--2026-11-23) [ok](#twice-1)',
      '[ok](api.md) [ok](../README.md) [web](https://example.com/x#y) `[in code](nowhere.md)`',
      '[gone](nowhere.md) [no heading](#no-such-section) [no heading elsewhere](example.md#bulk-writes)',
      '```',
      '[in a code block](nowhere.md)',
      '```',
    ].join('\n'),
  };
  const broken = brokenLinks(file, {
    read: (f) => texts[f] ?? disk.read(f),
    exists: (f) => f in texts || disk.exists(f),
  });
  t.deepEqual(broken, [
    'docs/example.md: nowhere.md (no such file)',
    'docs/example.md: #no-such-section (no such heading)',
    'docs/example.md: example.md#bulk-writes (no such heading)',
  ]);
});
