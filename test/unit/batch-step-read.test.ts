import test from 'ava';
import type { BatchRead } from '../../domain/batch/batch-command';
import { readOfStep } from '../../workers/commands/batch-step-resolver';

/** The read a command worker makes of a `$batch` GET step (workers/commands/batch-step-resolver.ts). */

const readOf = (read: BatchRead) => readOfStep({ id: 'r1', method: 'GET', dependsOn: [], read }, new Map());

test('a /$count step is a count; a key, even one written `$count`, is a key', (t) => {
  t.deepEqual(readOf({ route: 'Schemes', query: { $filter: 'TotalUnits gt 5' }, count: true }), {
    route: 'Schemes',
    query: { $filter: 'TotalUnits gt 5' },
    count: true,
  });
  t.deepEqual(readOf({ route: 'Schemes', query: {}, key: '$count' }), { route: 'Schemes', query: {}, key: '$count' });
});

test('a navigation count under /odata keeps its parent key', (t) => {
  const odata = {
    navigation: 'Developments',
    pageSize: 60,
    pageSizeApplied: false,
    control: { etag: true },
    level: 'minimal' as const,
    contextSet: 'Developments',
  };
  t.deepEqual(readOf({ route: 'Schemes', query: {}, key: 'h1am3Q', count: true, odata }), {
    route: 'Schemes',
    query: {},
    key: 'h1am3Q',
    count: true,
  });
});
