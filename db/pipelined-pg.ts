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

type CorkableStream = { cork?(): void; uncork?(): void };

/**
 * A pg client in pipeline mode whose statements of one turn of the event loop leave in one write.
 * pg writes each statement as it is given (corked around its own messages only), so a transaction's
 * BEGIN, row lock and document read went out as three writes, its record and COMMIT as two: on this
 * VM each write to a local socket, with the wake-up of the backend it causes, costs ~35 µs of CPU,
 * and the backend answered each apart. Now the socket is corked at a turn's first statement and
 * uncorked once the turn's synchronous work and promise reactions are done (`process.nextTick`
 * runs after them), so nothing waits for a later turn.
 */
export class TurnCorkedClient extends pg.Client {
  private corked = false;

  constructor(config: string | pg.ClientConfig = {}) {
    super(typeof config === 'string' ? { connectionString: config, pipeline: true } : { ...config, pipeline: true });
  }

  // pg's overloads are not restated: knex calls (config, callback), our statements (config).
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    this.corkUntilTurnEnds();
    return (super.query as (...args: unknown[]) => never)(config, values, callback);
  }

  private corkUntilTurnEnds(): void {
    if (this.corked) return;
    const stream = (this as unknown as { connection?: { stream?: CorkableStream } }).connection?.stream;
    if (!stream?.cork || !stream.uncork) return;
    this.corked = true;
    stream.cork();
    process.nextTick(() => {
      this.corked = false;
      stream.uncork!();
    });
  }
}

class EagerBeginClient extends TurnCorkedClient {
  /** A BEGIN sent but not yet answered: the next statement's answer waits for it as well. */
  private begun: Promise<unknown> | null = null;

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
