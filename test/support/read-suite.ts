import type { TestFn } from 'ava';
import { insertReadFixture, type ReadFixture } from './fixtures';
import { startStack, type Stack } from './stack';

/** What a read suite works on: a stack without workers, holding the read fixture. */
export interface ReadSuite {
  stack: Stack;
  fx: ReadFixture;
}

/**
 * The read suites' set-up, written once: before the file's tests a stack without workers starts on
 * a database of its own and the read fixture goes in (`ready` hands both over); after them the
 * stack closes, even when a test failed.
 */
export function onReadSuite(test: TestFn, ready: (suite: ReadSuite) => void): void {
  let stack: Stack | undefined;
  test.before(async () => {
    stack = await startStack({ workers: [] });
    ready({ stack, fx: await insertReadFixture(stack.knex) });
  });
  test.after.always(async () => {
    await stack?.close();
  });
}
