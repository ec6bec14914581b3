import pg from 'pg';
import type { Knex } from 'knex';

/**
 * A knex Postgres client whose connections pipeline (pg's `pipeline` mode: a statement is written
 * at once, not after the previous one's answer) and whose `BEGIN` is not waited for: it goes out
 * with the transaction's first statement, and that statement's answer carries BEGIN's failure, if
 * any. Issue 28: at one command at a time a command is a chain of round trips, each a write, a
 * wake-up of the backend and a wake-up of the worker; this takes one off every transaction, and
 * lets the command's record go out with its COMMIT (workers/commands/unit-of-work.ts).
 *
 * Knex still awaits every statement before issuing the next, so nothing else changes order. What
 * pipelining refuses (cursors, pg-query-stream) is not used on these connections: only the command
 * worker's command transactions use this client.
 */

const BEGIN = 'BEGIN;';

/** What knex reads of BEGIN's answer: nothing but its success. */
const BEGUN = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };

type Callback = (err: Error | null, result?: unknown) => void;

class EagerBeginClient extends pg.Client {
  /** A BEGIN sent but not yet answered: the next statement's answer waits for it as well. */
  private begun: Promise<unknown> | null = null;

  constructor(config: string | pg.ClientConfig) {
    super(typeof config === 'string' ? { connectionString: config, pipeline: true } : { ...config, pipeline: true });
  }

  // pg's overloads are not restated: knex calls (config, callback), our statements (config).
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    const call = super.query.bind(this) as (...args: unknown[]) => unknown;
    if (typeof values === 'function' && (config as { text?: unknown })?.text === BEGIN && !this.begun) {
      const begun = call(BEGIN) as Promise<unknown>;
      begun.catch(() => undefined); // reported through the statement that follows it
      this.begun = begun;
      queueMicrotask(() => (values as Callback)(null, BEGUN));
      return undefined as never;
    }
    const begun = this.begun;
    if (!begun) return call(config, values, callback) as never;
    this.begun = null;
    const done = [values, callback].find((arg) => typeof arg === 'function') as Callback | undefined;
    if (done) {
      const args = done === values ? [config] : [config, values];
      call(...args, (err: Error | null, result: unknown) =>
        begun.then(
          () => done(err, result),
          (beginErr: Error) => done(beginErr),
        ),
      );
      return undefined as never;
    }
    const answer = call(config, values) as Promise<unknown>;
    return Promise.all([begun, answer]).then(([, result]) => result) as never;
  }
}

/** The driver knex's pg dialect loads: pg, with the client above. */
const pipelinedDriver = Object.create(pg, { Client: { value: EagerBeginClient } }) as typeof pg;

// knex ships its dialects untyped; the pg one is the base of ours.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const PgDialect = require('knex/lib/dialects/postgres') as new (config: Knex.Config) => object;

export class PipelinedPgDialect extends PgDialect {
  _driver(): typeof pg {
    return pipelinedDriver;
  }
}
