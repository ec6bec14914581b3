import type { Response } from 'express';
import type { Knex } from 'knex';
import { listenForActivities, type ActivityListener } from '../../db/activities/activity-listener';
import { activitiesAfter, latestActivityId, type FeedRow } from '../../db/activities/activity-feed';
import { grantedRolesOf } from '../../db/roles/role-assignments';
import { POLICY, mergeRoles, policyAllows, type RoleName } from '../../domain/auth/roles';
import { encodeId } from '../../domain/ids/id-codec';
import type { AppConfig } from '../../infra/config/load-config';
import type { Logger } from '../../infra/logger';
import { changeFeedMetrics, type ChangeFeedMetrics, type Registry } from '../../infra/metrics/registry';

/**
 * The change feed's hub, one per API process (GET /Changes, DESIGN §16): one Postgres connection of
 * its own (not from the pool) LISTENs on the activity log's channel; a notification, or the safety
 * poll, runs ONE query for the entries after the last one it has seen, and the rows go out to every
 * open stream as SSE frames built once and shared by all of them. However many listeners are open,
 * a change costs one query per process. Writers of the log commit ids in id order (the advisory lock
 * of db/activities/activity-log.ts), so "id > last seen" never skips a row committed late.
 */

/** GET /Changes settings (CHANGES_*), as AppConfig holds them. */
export type ChangeFeedSettings = AppConfig['changes'];

export interface ChangeFeedDeps extends ChangeFeedSettings {
  knex: Knex;
  /** Where the LISTEN connection goes: the primary (notifications are not sent on replicas). */
  databaseUrl: string;
  logger: Logger;
  registry?: Registry;
}

/** Rows per query, for the hub and for each stream's catch-up. */
export const FEED_PAGE_ROWS = 200;
/** What the `retry:` field at the start of every stream asks a browser to wait before reconnecting. */
export const RECONNECT_MS = 2000;
/** Longest wait between two attempts to reconnect the LISTEN connection. */
const MAX_BACKOFF_MS = 5000;
/** How long a dropped stream may take to flush its last words before its socket is destroyed. */
const DROP_GRACE_MS = 10_000;

const HEARTBEAT = Buffer.from(': keep-alive\n\n');

/** One SSE frame: `id` is the encoded Id GET /Activities shows, `data` its representation. */
export function frameOf(row: FeedRow): Buffer {
  // Event types are domain event names; anything that could break a line is taken out all the same.
  const type = row.eventType.replace(/[\r\n]/g, '');
  return Buffer.from(`id: ${encodeId('Activity', row.id)}\nevent: ${type}\ndata: ${row.json}\n\n`);
}

interface Batch {
  ids: number[];
  frames: Buffer[];
  /** Every frame, in one buffer: what a stream that has seen none of them is written. */
  joined: Buffer;
}

/** What a stream may go on for: its token's lifetime, and the roles its caller holds. */
export interface StreamAccess {
  /** When the token expires (ms since the epoch); absent: no token to outlive (mock mode). */
  expiresAt?: number;
  /**
   * The roles the token claims, merged with the service's grants at each re-check; absent: the
   * roles cannot change (mock mode, AUTH_MOCK_ROLE).
   */
  tokenRoles?: readonly RoleName[];
}

/** The last words of a stream whose token expired, and of one whose caller lost the role. */
export const TOKEN_EXPIRED = 'token expired; reconnect with a fresh token and Last-Event-ID';
export const ROLE_REVOKED = 'role revoked: this caller no longer holds User or Admin; the stream ends';

/** Subjects whose grants one re-check statement reads. */
const RECHECK_SUBJECTS_PER_QUERY = 1000;

/** setTimeout's longest wait; a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One open GET /Changes stream. */
export class ChangeStream {
  /** Id of the last event written (or skipped as already known). */
  lastSent = 0;
  live = false;
  closed = false;
  private readonly closeWaiters = new Set<() => void>();
  private expiry?: NodeJS.Timeout;

  constructor(
    readonly res: Response,
    readonly subject: string,
    private readonly hub: ChangeHub,
    readonly access: StreamAccess = {},
  ) {
    res.once('close', () => this.onClose());
  }

  /** Ends the stream the moment its token expires (at once if it has): nothing is written after it. */
  endAtExpiry(): void {
    const at = this.access.expiresAt;
    if (at === undefined || this.closed) return;
    const wait = at - Date.now();
    if (wait <= 0) {
      this.hub.countEnded('expired');
      this.end(TOKEN_EXPIRED);
      return;
    }
    this.expiry = setTimeout(() => this.endAtExpiry(), Math.min(wait, MAX_TIMER_MS));
    this.expiry.unref();
  }

  /** Writes catch-up rows (history); false when the client should be waited for (`drained`). */
  writeRows(rows: readonly FeedRow[]): boolean {
    if (this.closed || rows.length === 0) return true;
    const ok = this.res.write(Buffer.concat(rows.map(frameOf)));
    this.lastSent = rows[rows.length - 1]!.id;
    this.hub.countSent(rows.length);
    return ok;
  }

  /** Resolves once what was written has been taken by the socket, or the stream is closed. */
  drained(): Promise<void> {
    if (this.closed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.closeWaiters.delete(done);
        resolve();
      };
      this.res.once('drain', done);
      this.closeWaiters.add(done);
    });
  }

  /** From now on the hub writes every event after `after` (history up to it has been written). */
  goLive(after: number): void {
    this.lastSent = Math.max(this.lastSent, after);
    this.live = true;
  }

  /** The hub's events: the ones this stream has not had, in one write. */
  deliver(batch: Batch): void {
    if (!this.live || this.closed) return;
    const last = batch.ids[batch.ids.length - 1]!;
    if (last <= this.lastSent) return;
    let chunk = batch.joined;
    let count = batch.ids.length;
    if (batch.ids[0]! <= this.lastSent) {
      const fresh = batch.ids.findIndex((id) => id > this.lastSent);
      chunk = Buffer.concat(batch.frames.slice(fresh));
      count -= fresh;
    }
    this.res.write(chunk);
    this.lastSent = last;
    this.hub.countSent(count);
    this.checkBuffer();
  }

  heartbeat(): void {
    if (!this.live || this.closed) return;
    this.res.write(HEARTBEAT);
    this.checkBuffer();
  }

  /**
   * Ends the stream with a last comment saying why (a client that reconnects with Last-Event-ID
   * misses nothing), then destroys its socket if that does not flush soon: what it holds is freed.
   */
  end(why: string): void {
    if (this.closed) return;
    this.live = false;
    const res = this.res;
    res.end(`: ${why}\n\n`, () => res.socket?.end());
    const timer = setTimeout(() => res.destroy(), DROP_GRACE_MS);
    timer.unref();
    res.once('close', () => clearTimeout(timer));
    this.onClose();
  }

  /** Bytes written but not yet taken by the client: in Node's buffers and the socket's. */
  private checkBuffer(): void {
    if (this.res.writableLength <= this.hub.settings.maxBufferBytes) return;
    this.hub.dropSlow(this);
  }

  private onClose(): void {
    if (this.closed) return;
    clearTimeout(this.expiry);
    this.closed = true;
    this.live = false;
    this.hub.forget(this);
    for (const waiter of [...this.closeWaiters]) waiter();
  }
}

/** Why a stream cannot be opened now (the route turns it into its problem). */
export type OpenRefusal = 'not-ready' | 'listeners' | 'subject';

export class ChangeHub {
  /** Id of the last entry fanned out; null until the log has been read once. */
  position: number | null = null;
  readonly settings: ChangeFeedSettings;
  private readonly streams = new Set<ChangeStream>();
  private readonly perSubject = new Map<string, number>();
  private readonly metrics?: ChangeFeedMetrics;
  private listener?: ActivityListener;
  private connecting = false;
  private backoffMs = 100;
  private reading = false;
  private readAgain = false;
  private rechecking = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: ChangeFeedDeps) {
    this.settings = deps;
    if (deps.registry) this.metrics = changeFeedMetrics(deps.registry, () => this.streams.size);
  }

  /** Starts listening and polling; never throws (an unreachable database is retried). */
  start(): void {
    this.timers.push(
      setInterval(() => this.poll(), this.deps.pollMs),
      setInterval(() => this.streams.forEach((stream) => stream.heartbeat()), this.deps.heartbeatMs),
      setInterval(() => void this.recheckRoles(), this.deps.roleRecheckMs),
    );
    this.timers.forEach((timer) => timer.unref());
    void this.connect();
    this.wake();
  }

  /** Resolves true once the log has been read once (the position is known), false after `timeoutMs`. */
  async ready(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.position === null && !this.closed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.position !== null;
  }

  /** Why a stream of `subject` cannot be opened now, if it cannot (checked before any query). */
  refusal(subject: string): OpenRefusal | undefined {
    if (this.position === null || this.closed) return 'not-ready';
    if (this.streams.size >= this.deps.maxListeners) return 'listeners';
    if ((this.perSubject.get(subject) ?? 0) >= this.deps.maxPerSubject) return 'subject';
    return undefined;
  }

  /** A new stream, counted against the limits; or why not. */
  open(res: Response, subject: string, access: StreamAccess = {}): ChangeStream | OpenRefusal {
    const refused = this.refusal(subject);
    if (refused) return refused;
    const stream = new ChangeStream(res, subject, this, access);
    this.streams.add(stream);
    this.perSubject.set(subject, (this.perSubject.get(subject) ?? 0) + 1);
    return stream;
  }

  forget(stream: ChangeStream): void {
    if (!this.streams.delete(stream)) return;
    const left = (this.perSubject.get(stream.subject) ?? 1) - 1;
    if (left > 0) this.perSubject.set(stream.subject, left);
    else this.perSubject.delete(stream.subject);
  }

  countSent(events: number): void {
    this.metrics?.sent.inc(events);
  }

  dropSlow(stream: ChangeStream): void {
    this.metrics?.dropped.inc({ reason: 'behind' });
    stream.res.req.log?.warn(
      { subject: stream.subject, lastSent: stream.lastSent, buffered: stream.res.writableLength },
      'change stream dropped: the client fell behind (CHANGES_MAX_BUFFER_BYTES)',
    );
    stream.end(
      `dropped: this stream fell more than ${this.deps.maxBufferBytes} bytes behind (CHANGES_MAX_BUFFER_BYTES); reconnect with Last-Event-ID to resume`,
    );
  }

  countEnded(reason: 'expired' | 'revoked'): void {
    this.metrics?.dropped.inc({ reason });
  }

  /**
   * Every CHANGES_ROLE_RECHECK_MS: each stream's caller is asked again whether it holds a role
   * (grants can be revoked while a stream is open, through any API process); one that lost it gets
   * a last comment. The grants of every subject with a stream are read in one statement per
   * RECHECK_SUBJECTS_PER_QUERY subjects, not one per stream. A check that cannot be answered (the
   * database is down) keeps the streams: the next one decides.
   */
  async recheckRoles(): Promise<void> {
    // One re-check at a time: a slow database does not pile them up.
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      await this.recheckEachStream();
    } finally {
      this.rechecking = false;
    }
  }

  private async recheckEachStream(): Promise<void> {
    const checked = [...this.streams].filter((stream) => stream.access.tokenRoles !== undefined);
    const subjects = [...new Set(checked.map((stream) => stream.subject))];
    const granted = new Map<string, RoleName[]>();
    try {
      for (let i = 0; i < subjects.length; i += RECHECK_SUBJECTS_PER_QUERY) {
        const some = await grantedRolesOf(this.deps.knex, subjects.slice(i, i + RECHECK_SUBJECTS_PER_QUERY));
        some.forEach((roles, subject) => granted.set(subject, roles));
      }
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'change streams: the role re-check failed');
      return;
    }
    for (const stream of checked) {
      const roles = mergeRoles(stream.access.tokenRoles!, granted.get(stream.subject) ?? []);
      if (stream.closed || policyAllows(POLICY.default, roles)) continue;
      this.countEnded('revoked');
      stream.res.req.log?.info({ subject: stream.subject }, 'change stream ended: the caller lost its role');
      stream.end(ROLE_REVOKED);
    }
  }

  /** A stream whose client took no byte for CHANGES_STALL_MS (api/limits/stall-guard.ts destroys it). */
  countStalled(stream: ChangeStream): void {
    this.metrics?.dropped.inc({ reason: 'stalled' });
    stream.res.req.log?.warn(
      { subject: stream.subject, lastSent: stream.lastSent, stallMs: this.deps.stallMs },
      'change stream dropped: the client took no byte (CHANGES_STALL_MS)',
    );
  }

  /** Reads the log now (coalesced: one read at a time, run again if asked meanwhile). */
  wake(): void {
    if (this.closed) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    void this.read().finally(() => {
      this.reading = false;
    });
  }

  /** Ends every stream (the process is stopping), then the LISTEN connection and the timers. */
  async close(): Promise<void> {
    this.closed = true;
    this.timers.forEach((timer) => clearInterval(timer));
    for (const stream of [...this.streams]) stream.end('the server is shutting down; reconnect with Last-Event-ID');
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end();
  }

  private async read(): Promise<void> {
    try {
      if (this.position === null) this.position = await latestActivityId(this.deps.knex);
      do {
        this.readAgain = false;
        for (;;) {
          const rows = await activitiesAfter(this.deps.knex, this.position, FEED_PAGE_ROWS);
          if (rows.length) this.fanOut(rows);
          if (rows.length < FEED_PAGE_ROWS || this.closed) break;
        }
      } while (this.readAgain && !this.closed);
    } catch (err) {
      // The next notification or poll tries again; nothing is lost (the log is read from `position`).
      this.deps.logger.warn({ err: (err as Error).message }, 'change feed: reading the activity log failed');
    }
  }

  /** Moves `position` and writes the rows to every live stream, in the same tick. */
  private fanOut(rows: readonly FeedRow[]): void {
    this.position = rows[rows.length - 1]!.id;
    if (this.streams.size === 0) return;
    const frames = rows.map(frameOf);
    const batch: Batch = { ids: rows.map((row) => row.id), frames, joined: Buffer.concat(frames) };
    for (const stream of this.streams) stream.deliver(batch);
  }

  /**
   * A notification: the log holds every id up to `id` (its writers commit in id order, under their
   * lock). With no stream open and no read under way, nobody would receive those rows, so the
   * position moves to `id` without reading them: an idle feed costs each API process no query
   * and no frames per recorded burst (issue 28). A stream opened afterwards starts after `id`, as
   * it would have after a read.
   */
  private heard(id: number): void {
    if (this.position !== null && id <= this.position) return;
    if (this.position !== null && this.streams.size === 0 && !this.reading) {
      this.position = id;
      return;
    }
    this.wake();
  }

  private poll(): void {
    this.wake();
    const listener = this.listener;
    listener?.ping().catch((err: Error) => this.lost(listener, err));
  }

  private async connect(): Promise<void> {
    if (this.closed || this.connecting) return;
    this.connecting = true;
    let listener: ActivityListener | undefined;
    try {
      listener = await listenForActivities(this.deps.databaseUrl, {
        onNotify: (id) => this.heard(id),
        onLost: (err) => this.lost(listener, err),
      });
      if (this.closed) {
        await listener.end();
        return;
      }
      this.listener = listener;
      this.backoffMs = 100;
      // Whatever was committed while no connection listened is read now.
      this.wake();
    } catch (err) {
      this.reconnectLater(err as Error);
    } finally {
      this.connecting = false;
    }
  }

  private lost(listener: ActivityListener | undefined, err: Error): void {
    if (!listener || this.listener !== listener) return;
    this.listener = undefined;
    void listener.end();
    this.reconnectLater(err);
  }

  private reconnectLater(err: Error): void {
    if (this.closed) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    this.deps.logger.warn({ err: err.message, retryInMs: wait }, 'change feed: LISTEN connection lost; reconnecting');
    setTimeout(() => void this.connect(), wait).unref();
  }
}
