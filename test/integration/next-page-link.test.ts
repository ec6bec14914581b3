import test from 'ava';
import { startStack, type HttpResult, type Stack } from '../support/stack';

/** `Link: <…>; rel="next"` on collection pages that have a next page (DESIGN §13, §15). */

let stack: Stack;
const NAMES = ['Alder', 'Birch', 'Cedar', 'Damson', 'Elm', 'Fir', 'Gorse'];

test.before(async () => {
  stack = await startStack({ env: { MAX_SKIP: '4', MAX_SYNTAX_NODES: '12' } });
  await stack.knex('companies').insert(NAMES.map((name) => ({ name })));
});
test.after.always(async () => stack?.close());

/** The target of a `rel="next"` link, or undefined when the page has none. */
function nextOf(res: HttpResult): string | undefined {
  const header = res.headers.get('link');
  if (header === null) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(header);
  if (!match) throw new Error(`unexpected Link header: ${header}`);
  return match[1];
}

/** Follows `rel="next"` from `path` to the end: every page's names, and the links followed. */
async function walk(path: string): Promise<{ pages: string[][]; links: string[] }> {
  const pages: string[][] = [];
  const links: string[] = [];
  let next: string | undefined = path;
  while (next !== undefined) {
    const res = await stack.get(next);
    if (res.status !== 200) throw new Error(`${next}: ${res.status} ${res.text}`);
    pages.push((res.body as { Name: string }[]).map((row) => row.Name));
    next = nextOf(res);
    if (next !== undefined) links.push(next);
    if (pages.length > 20) throw new Error('the links never end');
  }
  return { pages, links };
}

test('default order: keyset links walk every row once, and the last page has none', async (t) => {
  const { pages, links } = await walk('/Companies?$top=3');
  t.deepEqual(pages, [NAMES.slice(0, 3), NAMES.slice(3, 6), NAMES.slice(6)]);
  t.is(links.length, 2);
  t.deepEqual(
    (await walk('/Companies?$top=1')).pages,
    NAMES.map((name) => [name]),
  );
  for (const link of links) t.regex(link, /^\/Companies\?\$top=3&\$filter=Id%20gt%20'[A-Za-z0-9_-]{6}'$/);
  // The cursor is the last Id of the page it follows.
  const first = await stack.get('/Companies?$top=3');
  const lastId = (first.body as { Id: string }[])[2]!.Id;
  t.is(nextOf(first), `/Companies?$top=3&$filter=Id%20gt%20'${lastId}'`);
});

test('a page that ends exactly at the last row has no link (the next page is known, not guessed)', async (t) => {
  const { pages } = await walk('/Companies?$top=7');
  t.deepEqual(pages, [NAMES]);
  const { pages: sixes } = await walk(`/Companies?$top=6`);
  t.deepEqual(sixes, [NAMES.slice(0, 6), NAMES.slice(6)]);
  t.is(nextOf(await stack.get('/Companies?$top=6&$skip=1')), undefined);
  t.is(nextOf(await stack.get('/Companies?$top=0')), undefined);
});

test('the read’s own filter and options stay in the link; $skip is replaced by the cursor, $count left out', async (t) => {
  const filter = "Name ne 'Birch'";
  const { pages, links } = await walk(`/Companies?$filter=${encodeURIComponent(filter)}&$top=2&$skip=1&$count=true`);
  t.deepEqual(pages, [['Cedar', 'Damson'], ['Elm', 'Fir'], ['Gorse']]);
  // Each link moves the cursor of the filter it follows; the filter does not grow page by page.
  for (const link of links) {
    t.regex(decodeURIComponent(link), /\$filter=\(Name ne 'Birch'\) and Id gt '[A-Za-z0-9_-]{6}'$/, link);
    t.notRegex(link, /\$skip|\$count/);
  }
  const first = await stack.get(`/Companies?$filter=${encodeURIComponent(filter)}&$top=2&$count=true`);
  t.is(first.headers.get('x-total-count'), '6');
});

test('another order pages by $skip, keeping the order and $count; no link past MAX_SKIP', async (t) => {
  const first = await stack.get('/Companies?$orderby=Name desc&$top=2&$count=true');
  t.is(nextOf(first), '/Companies?$orderby=Name%20desc&$top=2&$count=true&$skip=2');
  const second = await stack.get(nextOf(first)!);
  t.deepEqual(
    (second.body as { Name: string }[]).map((row) => row.Name),
    ['Elm', 'Damson'],
  );
  t.is(second.headers.get('x-total-count'), '7');
  t.is(nextOf(second), '/Companies?$orderby=Name%20desc&$top=2&$count=true&$skip=4');
  // $skip=6 would pass MAX_SKIP (4): no link that would answer 400, though rows remain.
  const third = await stack.get(nextOf(second)!);
  t.is((third.body as unknown[]).length, 2);
  t.is(nextOf(third), undefined);
});

test('a cursor the client wrote under another operator is kept, and the new one added', async (t) => {
  const ids = ((await stack.get('/Companies?$top=7')).body as { Id: string }[]).map((row) => row.Id);
  const filter = `Name eq 'Alder' or Id gt '${ids[4]}'`;
  const { pages, links } = await walk(`/Companies?$top=1&$filter=${encodeURIComponent(filter)}`);
  t.deepEqual(pages, [['Alder'], ['Fir'], ['Gorse']]);
  t.true(decodeURIComponent(links[0]!).endsWith(`$filter=(${filter}) and Id gt '${ids[0]}'`));
});

test('a filter at MAX_SYNTAX_NODES gets no keyset link it could not follow', async (t) => {
  const filter = "Name ne 'A' and Name ne 'B' and Name ne 'C'";
  const res = await stack.get(`/Companies?$top=2&$filter=${encodeURIComponent(filter)}`);
  t.is(res.status, 200);
  t.is((res.body as unknown[]).length, 2);
  t.is(nextOf(res), undefined);
  const simpler = await stack.get(`/Companies?$top=2&$filter=${encodeURIComponent("Name ne 'A'")}`);
  t.truthy(nextOf(simpler));
  t.is((await stack.get(nextOf(simpler)!)).status, 200);
});

test('a GET in a $batch carries the same Link as alone', async (t) => {
  const alone = await stack.get('/Companies?$top=3');
  const batch = await stack.request('POST', '/$batch', {
    body: { requests: [{ id: 'r1', method: 'GET', url: '/Companies?$top=3' }] },
  });
  t.is(batch.status, 200);
  const [answer] = (batch.body as { responses: { headers: Record<string, string> }[] }).responses;
  t.is(answer!.headers.link, alone.headers.get('link')!);
});
