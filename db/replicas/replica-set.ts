import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { createKnex, type KnexLog } from '../knex';
import { badRequest } from '../../domain/errors/domain-error';
import { positionOfLsn, walPositionNow, type WalPosition } from './wal-position';

/**
 * The hot standbys an API process reads from (DESIGN §14). Each is probed in the background for
 * how far it has replayed and how far behind it is; a read picks one that is up and close enough
 * (or, with a consistency token, one that has replayed past the write), else the primary. A replica
 * that fails is marked down for DOWN_MS and the read runs again on the primary, so a replica can
 * slow a read down but never fail it.
 */

/** How long a failed replica is left out before reads try it again. */
export const DOWN_MS = 5000;
/** How often each replica's replay position and lag are read. */
const PROBE_MS = 500;
/** How often a read with a token asks a lagging replica again while it waits. */
const WAIT_STEP_MS = 10;

export interface ReplicaStatus {
  /** host:port/database, never the password. */
  name: string;
  state: 'up' | 'down';
  /** Milliseconds behind the primary at the last probe (null: not known yet, or down). */
  lagMs: number | null;
}

/** The database a read runs on: a replica, or (no `replica`) the primary. */
export interface ChosenDatabase {
  knex: Knex;
  replica?: Replica;
}

interface Replica {
  name: string;
  knex: Knex;
  /** Failed and not yet probed back; reads leave it out until `downUntil`. */
  down: boolean;
  downUntil: number;
  replayed?: WalPosition;
  lagMs: number | null;
}

export interface ReplicaSetOptions {
  urls: readonly string[];
  /** REPLICA_WAIT_MS: how long a read with a token waits for a replica to catch up. */
  waitMs: number;
  /** REPLICA_MAX_LAG_MS: replicas further behind are skipped by reads without a token. */
  maxLagMs: number;
  poolMax: number;
  logger: KnexLog & { info(obj: object, msg: string): void };
}

function nameOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/**
 * Errors that say the replica, not the read, is at fault: it cannot be reached, refuses the
 * connection or is shutting down (08, 28, 3D — the database not replayed yet —, 53, 57P, 58, XX,
 * sockets, pool timeouts), or it cancelled the read to replay WAL (a recovery conflict: 40001 with
 * that message). The primary answers those; a read's own errors (syntax, timeouts) stand.
 */
function isReplicaFault(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  const code = e?.code ?? '';
  const message = e?.message ?? '';
  if (/^(08|28|3D|53|57P|58|XX)/.test(code)) return true;
  if (/^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NOTFOUND|AI_AGAIN)$/.test(code)) return true;
  if (code === '40001' && /conflict with recovery/.test(message)) return true;
  return /Timeout acquiring a connection|Connection terminated|ECONNREFUSED/.test(message);
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  private next = 0;
  private timer?: NodeJS.Timeout;
  /** The primary's WAL position at the last probe, or at the last read whose token went beyond it. */
  private primaryAt?: WalPosition;
  /** The read of `primaryAt` under way for tokens beyond it, shared by the reads that wait on it. */
  private refreshing?: Promise<void>;

  constructor(
    private readonly primary: Knex,
    private readonly options: ReplicaSetOptions,
  ) {
    this.replicas = options.urls.map((url) => ({
      name: nameOf(url),
      // A replica that cannot be reached must fail fast: the primary is waiting to serve the read.
      knex: createKnex(url, options.poolMax, options.logger, { acquireTimeoutMs: 1000 }),
      down: false,
      downUntil: 0,
      lagMs: null,
    }));
  }

  get size(): number {
    return this.replicas.length;
  }

  /** Probes at once and then every PROBE_MS (the timer never keeps the process alive). */
  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), PROBE_MS);
    this.timer.unref();
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      name: r.name,
      state: r.down ? 'down' : 'up',
      lagMs: r.down || !Number.isFinite(r.lagMs) ? null : r.lagMs,
    }));
  }

  /** The WAL position the primary has written up to now: at or after every commit it reported. */
  private async primaryPosition(): Promise<WalPosition> {
    return positionOfLsn(await walPositionNow(this.primary));
  }

  /** Where a write that has just committed is in the WAL: the primary's position now (`pg_lsn` text). */
  walPositionNow(): Promise<string> {
    return walPositionNow(this.primary);
  }

  /** Runs `work` on the chosen database; again on the primary when the chosen replica fails it. */
  async run<T>(chosen: ChosenDatabase, work: (knex: Knex) => Promise<T>): Promise<T> {
    if (!chosen.replica) return work(this.primary);
    try {
      return await work(chosen.knex);
    } catch (err) {
      if (!isReplicaFault(err)) throw err;
      this.markDown(chosen.replica, err);
      return work(this.primary);
    }
  }

  /**
   * Where a read runs: a replica that has replayed `after` (waiting up to REPLICA_WAIT_MS for one),
   * or without a token any replica within REPLICA_MAX_LAG_MS, taken in turn; else the primary.
   */
  async choose(after?: WalPosition): Promise<ChosenDatabase> {
    if (after !== undefined) await this.refuseBeyondPrimary(after);
    const up = this.replicas.filter((r) => !r.down);
    if (up.length === 0) return { knex: this.primary };
    if (after === undefined) {
      const close = up.filter((r) => r.lagMs !== null && r.lagMs <= this.options.maxLagMs);
      if (close.length === 0) return { knex: this.primary };
      const replica = close[this.next++ % close.length]!;
      return { knex: replica.knex, replica };
    }
    const ready = up.filter((r) => r.replayed !== undefined && r.replayed >= after);
    if (ready.length) {
      const replica = ready[this.next++ % ready.length]!;
      return { knex: replica.knex, replica };
    }
    return (await this.waitFor(up, after)) ?? { knex: this.primary };
  }

  /**
   * A token names a position the primary had written when the write's answer left, so one beyond
   * the primary's position now was never issued: without this, any caller could make every read
   * wait REPLICA_WAIT_MS and then load the primary. Tokens are judged against the position the probe
   * keeps; only one beyond it costs a question to the primary (shared by the reads waiting then),
   * which a token from a write newer than the last probe passes.
   */
  private async refuseBeyondPrimary(after: WalPosition): Promise<void> {
    const covered = () => this.primaryAt !== undefined && after <= this.primaryAt;
    if (covered()) return;
    // One under way may have been asked before this token was issued: it can only say yes.
    if (this.refreshing) await this.refreshing;
    if (covered()) return;
    this.refreshing ??= this.primaryPosition()
      .then((position) => {
        this.primaryAt = position;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    await this.refreshing;
    if (!covered()) {
      throw badRequest(
        "X-Consistency-Token: names a WAL position beyond the primary's; no write answered it (send back the header of a write answer as it came)",
      );
    }
  }

  /** Asks the furthest replica until it has replayed `after` or REPLICA_WAIT_MS has passed. */
  private async waitFor(up: Replica[], after: WalPosition): Promise<{ knex: Knex; replica: Replica } | undefined> {
    const deadline = Date.now() + this.options.waitMs;
    const replica = up.reduce((a, b) => ((a.replayed ?? 0n) >= (b.replayed ?? 0n) ? a : b));
    while (Date.now() < deadline) {
      try {
        const result = await replica.knex.raw<{ rows: { replay_now: string | null }[] }>(
          'select pg_last_wal_replay_lsn()::text as replay_now',
        );
        const replayed = result.rows[0]?.replay_now;
        if (replayed) {
          // What it answers is news for every read until the next probe: later tokens it already
          // covers need no question of their own.
          const position = positionOfLsn(replayed);
          if (replica.replayed === undefined || position > replica.replayed) replica.replayed = position;
          if (position >= after) return { knex: replica.knex, replica };
        }
      } catch (err) {
        this.markDown(replica, err);
        return undefined;
      }
      await sleep(Math.min(WAIT_STEP_MS, Math.max(0, deadline - Date.now())));
    }
    return undefined;
  }

  private markDown(replica: Replica, err: unknown): void {
    if (!replica.down) {
      this.options.logger.warn(
        { replica: replica.name, err: err instanceof Error ? err.message : String(err) },
        'replica down: reads go to the primary',
      );
    }
    replica.down = true;
    replica.downUntil = Date.now() + DOWN_MS;
    replica.lagMs = null;
  }

  /**
   * Each replica's replay position and lag. Lag is 0 when it has replayed what the primary had
   * written just before; otherwise the age of the last transaction it replayed (an idle primary
   * with a caught-up replica is not "behind" however old that transaction is).
   */
  private async probe(): Promise<void> {
    try {
      this.primaryAt = await this.primaryPosition();
    } catch {
      // The primary is down: nothing to compare with; replicas keep their last state.
      return;
    }
    await Promise.all(
      this.replicas.map(async (replica) => {
        if (replica.downUntil > Date.now()) return; // left out for DOWN_MS, then probed again
        try {
          const result = await replica.knex.raw<{
            rows: { replayed: string | null; standby: boolean; age_ms: number | null }[];
          }>(
            `select pg_last_wal_replay_lsn()::text as replayed, pg_is_in_recovery() as standby,
                    extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000 as age_ms`,
          );
          const row = result.rows[0]!;
          // A promoted replica has left the primary's timeline: it must not serve reads.
          if (!row.standby || row.replayed === null) throw new Error('not a standby (promoted, or not replicating)');
          const wasDown = replica.down;
          replica.replayed = positionOfLsn(row.replayed);
          replica.lagMs =
            this.primaryAt !== undefined && replica.replayed >= this.primaryAt
              ? 0
              : Math.max(0, Math.round(row.age_ms ?? Number.POSITIVE_INFINITY));
          replica.down = false;
          if (wasDown) this.options.logger.info({ replica: replica.name }, 'replica back: reads return to it');
        } catch (err) {
          this.markDown(replica, err);
        }
      }),
    );
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled(this.replicas.map((r) => r.knex.destroy()));
  }
}
