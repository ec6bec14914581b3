import type { Knex } from 'knex';
import type { ReadRunner } from '../query/read-operation';
import { withReadTimeout } from '../query/read-timeout';
import type { WalPosition } from './wal-position';
import type { ChosenDatabase, ReplicaSet } from './replica-set';

/**
 * Where one read request runs (DESIGN §14): the database the replica set chooses for it, once per
 * request (a page and its count see the same database), under STATEMENT_TIMEOUT_MS like every
 * read, again on the primary when a replica fails it. Without replicas: the primary's pool.
 */
export type ReadRouter = (after?: WalPosition) => ReadRunner;

export function readRouter(primary: Knex, replicas: ReplicaSet | undefined, timeoutMs: number): ReadRouter {
  if (!replicas) {
    const onPrimary: ReadRunner = (read) => withReadTimeout(primary, timeoutMs, read);
    return () => onPrimary;
  }
  return (after) => {
    let chosen: Promise<ChosenDatabase> | undefined;
    return async (read) => {
      chosen ??= replicas.choose(after);
      return replicas.run(await chosen, (knex) => withReadTimeout(knex, timeoutMs, read));
    };
  };
}
