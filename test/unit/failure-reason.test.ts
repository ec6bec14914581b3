import test from 'ava';
import fc from 'fast-check';
import path from 'node:path';
import { publicFailure } from '../../workers/shared/failure-reason';

/** What a failed job keeps for /Jobs and Bull Board (issue 24, finding 7): no SQL, no absolute path. */

const ROOT = path.resolve(__dirname, '../../..');

function pgError(message: string, code = '23503'): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' });
}

test('a database error is failed with its SQLSTATE only; the job id says where the rest is', (t) => {
  const knexMessage =
    'insert into "webhook_deliveries" (subscription_id) values ($1) - insert or update on table "webhook_deliveries" violates foreign key constraint "webhook_deliveries_subscription_id_foreign"';
  const { error, withheld } = publicFailure(pgError(knexMessage), 'wh-1');
  t.true(withheld);
  t.is(error.message, 'a database error (SQLSTATE 23503); the details are in the worker log under job wh-1');
  t.false(error.stack!.includes('webhook_deliveries'));
});

test('a plain reason passes; its stack frames are named relative to the project', (t) => {
  const err = new Error('HTTP 500: not yet');
  err.stack = `Error: HTTP 500: not yet\n    at deliver (${ROOT}/dist/workers/notifications/x.js:1:2)\n    at async ${ROOT}/node_modules/bullmq/w.js:3:4\n    at f (/usr/lib/node/other.js:5:6)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)`;
  const { error, withheld } = publicFailure(err, 'j');
  t.false(withheld);
  t.is(error.message, 'HTTP 500: not yet');
  t.is(
    error.stack,
    'Error: HTTP 500: not yet\n    at deliver (dist/workers/notifications/x.js:1:2)\n    at async node_modules/bullmq/w.js:3:4\n    at f (…/other.js:5:6)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  );
});

test('BullMQ control errors pass untouched; UnrecoverableError keeps its name', (t) => {
  const delayed = Object.assign(new Error('bullmq:movedToDelayed'), { name: 'DelayedError' });
  t.is(publicFailure(delayed, 'j').error, delayed);
  const unrecoverable = Object.assign(new Error('bad signature'), { name: 'UnrecoverableError' });
  t.is(publicFailure(unrecoverable, 'j').error.name, 'UnrecoverableError');
});

const SQL = [
  'insert into t values (1)',
  'delete from t where x',
  'select a from b',
  'violates foreign key',
  'relation "t" does not exist',
  'update "t" set a = 1',
];

test('property: a reason quoting SQL anywhere, or any database error, never keeps its text; no absolute path survives', (t) => {
  fc.assert(
    fc.property(fc.string(), fc.constantFrom(...SQL), fc.string(), fc.boolean(), (before, sql, after, fromPg) => {
      const message = `${before} ${sql} ${after}`;
      const err = fromPg ? pgError(message, '42P01') : new Error(message);
      err.stack = `Error: ${message}\n    at h (${ROOT}/dist/a.js:1:1)\n    at ${ROOT}/b.js:2:2`;
      const { error } = publicFailure(err, 'job-1');
      return !error.message.includes(sql) && !error.stack!.includes(ROOT) && !error.stack!.includes(sql);
    }),
  );
  fc.assert(
    fc.property(fc.string(), (text) => {
      const err = new Error(`${text} at ${ROOT}/x.js`);
      return !publicFailure(err, 'j').error.message.includes(ROOT);
    }),
  );
  t.pass();
});
