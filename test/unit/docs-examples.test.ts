import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { decodeId } from '../../domain/ids/id-codec';

/**
 * What a newcomer copies from the README and the manuals must work: the README stays short, a
 * /Changes resume example names an Activity Id (a Scheme's Id there is a 400), and a subscription
 * example names a receiver that exists (a host that does not resolve is a 400). The examples were
 * run against `npm start`; these checks keep them from drifting back.
 */

const root = path.resolve(__dirname, '../../..');
const documents = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
].map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }));

/** The Ids the /Changes examples resume after: `Last-Event-ID: X` and `Changes?since=X`. */
function resumeIds(text: string): string[] {
  return [...text.matchAll(/Last-Event-ID: ([A-Za-z0-9_-]{6})\b|\/Changes\?since=([A-Za-z0-9_-]{6})\b/g)].map(
    (m) => (m[1] ?? m[2])!,
  );
}

test('the README stays the newcomer’s page: at most 150 lines', (t) => {
  const lines = documents[0]!.text.trimEnd().split('\n').length;
  t.true(lines <= 150, `${lines} lines`);
});

test('every /Changes resume example names an Activity Id, not an entity’s', (t) => {
  const found = documents.flatMap(({ file, text }) => resumeIds(text).map((id) => ({ file, id })));
  t.true(
    found.some(({ file }) => file === 'README.md'),
    'the README shows a resume',
  );
  for (const { file, id } of found) t.not(decodeId('Activity', id), null, `${file}: ${id} is no Activity Id`);
  t.is(decodeId('Activity', 'h1am3Q'), null, 'a Scheme Id is no Activity Id (the check can fail)');
});

test('every subscription example posts to the local receiver the text runs, never a host that does not resolve', (t) => {
  const urls = documents.flatMap(({ file, text }) =>
    [...text.matchAll(/"Url"\s*:\s*"([^"]+)"/g)].map((m) => ({ file, url: m[1]! })),
  );
  t.true(urls.length >= 2, 'the examples were found');
  for (const { file, url } of urls) t.is(new URL(url).hostname, '127.0.0.1', `${file}: ${url}`);
});
