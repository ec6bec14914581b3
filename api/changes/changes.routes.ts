import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { activitiesAfter, latestActivityId, type FeedRow } from '../../db/activities/activity-feed';
import { badRequest, notAcceptable, tooManyRequests, unavailable } from '../../domain/errors/domain-error';
import { decodeId } from '../../domain/ids/id-codec';
import { callerOf, type Caller } from '../auth/caller';
import { dropWhenStalled } from '../limits/stall-guard';
import {
  FEED_PAGE_ROWS,
  RECONNECT_MS,
  type ChangeHub,
  type ChangeStream,
  type OpenRefusal,
  type StreamAccess,
} from './change-feed';

/** The media type of the stream. */
export const EVENT_STREAM = 'text/event-stream';

/** What a stream full of listeners asks a client to wait, in seconds. */
const RETRY_AFTER_SECONDS = 5;

/** How long a request waits for a hub that has not read the log yet before answering 503. */
const NOT_READY_WAIT_MS = 2000;

/** Where a stream starts: after this activity id, or (null) at "now". */
type ResumePoint = number | null;

/**
 * `Last-Event-ID` (what an EventSource sends when it reconnects) or `?since=`: an Activity Id as
 * GET /Activities shows it. The header wins when both are given (a browser reconnects to the URL it
 * first opened, `since` included). A value that is no Activity Id is a 400 naming the header or the
 * parameter, never echoing it.
 */
function resumePointOf(req: Request): ResumePoint {
  for (const name of Object.keys(req.query)) {
    if (name !== 'since') throw badRequest(`unknown query parameter: GET /Changes takes only 'since'`);
  }
  const header = req.get('Last-Event-ID');
  const since = req.query.since;
  if (since !== undefined && typeof since !== 'string') throw badRequest('since: give one Activity Id');
  const sinceId = since === undefined ? null : decodeId('Activity', since);
  if (since !== undefined && sinceId === null) {
    throw badRequest('since: not an Activity Id (the 6-character Id GET /Activities shows, as in an event’s id)');
  }
  // An empty Last-Event-ID is no id (an EventSource whose last event had none sends nothing).
  if (header !== undefined && header.trim() !== '') {
    const id = decodeId('Activity', header.trim());
    if (id === null) {
      throw badRequest('Last-Event-ID: not an Activity Id (send back the id of the last event received)');
    }
    return id;
  }
  return sinceId;
}

/** The problem of a stream that cannot be opened now. */
function refuse(hub: ChangeHub, refusal: OpenRefusal | undefined): void {
  if (refusal === 'not-ready') throw unavailable('The change feed is starting; try again shortly.');
  if (refusal === 'listeners') {
    throw unavailable(
      `This process serves at most ${hub.settings.maxListeners} change streams at once (CHANGES_MAX_LISTENERS); try again shortly.`,
      RETRY_AFTER_SECONDS,
    );
  }
  if (refusal === 'subject') {
    throw tooManyRequests(
      `Too many change streams at once: at most ${hub.settings.maxPerSubject} per caller (CHANGES_MAX_LISTENERS_PER_SUBJECT); close one first.`,
      RETRY_AFTER_SECONDS,
    );
  }
}

export interface ChangesRouteDeps {
  knex: Knex;
  hub: ChangeHub;
}

/**
 * How long the caller's stream may go on: to the token's `exp`, and while the token's roles merged
 * with the service's grants (read again at each re-check) still pass the default policy. A
 * mock-mode caller has neither: no token expires, and its role is fixed by AUTH_MOCK_ROLE.
 */
function accessOf(caller: Caller): StreamAccess {
  const { tokenRoles, expiresAt } = caller;
  return {
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(tokenRoles === undefined ? {} : { tokenRoles }),
  };
}

/**
 * `GET /Changes` (User or Admin, DESIGN §16): the activity log as Server-Sent Events. Without a
 * resume point the stream starts at "now"; with one, the entries after it are read from the primary
 * in pages (each page written once the client has taken the last: backpressure, no buffering) until
 * the stream has caught up with the process's hub, and from then on it gets the hub's events. The
 * switch happens in one tick with no await, so nothing is missed and nothing sent twice.
 */
export function changesHandler(deps: ChangesRouteDeps): RequestHandler {
  return async (req: Request, res: Response) => {
    const resume = resumePointOf(req);
    if (!req.accepts(EVENT_STREAM)) throw notAcceptable(`GET /Changes is offered as ${EVENT_STREAM} only.`);
    const hub = deps.hub;
    const caller = callerOf(req);
    const subject = caller.subject;
    // Only just started (or the database was down when it did): wait a little for its first read.
    if (hub.position === null) await hub.ready(NOT_READY_WAIT_MS);
    // The limits first, so a flood of refused requests costs no query.
    refuse(hub, hub.refusal(subject));
    // A resume point past the log's end names no activity (another database, or made up).
    if (resume !== null && resume > hub.position!) {
      if (resume > (await latestActivityId(deps.knex))) {
        throw badRequest('Last-Event-ID / since: names no activity recorded yet');
      }
    }
    // The first page before the answer starts: a database that cannot answer is a 503 problem.
    const firstPage = resume === null ? [] : await activitiesAfter(deps.knex, resume, FEED_PAGE_ROWS);
    // A client gone while the page was read: its close has passed, so no stream is opened for it.
    if (req.socket.destroyed || res.destroyed) return;
    const stream = hub.open(res, subject, accessOf(caller));
    if (typeof stream === 'string') return refuse(hub, stream);
    res.status(200);
    res.setHeader('Content-Type', `${EVENT_STREAM}; charset=utf-8`);
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    if (req.method === 'HEAD') {
      stream.end('no stream for HEAD');
      return;
    }
    // No idle timeout on a stream: the heartbeat keeps it busy and a dead client shows as a close.
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    res.write(`retry: ${RECONNECT_MS}\n\n`);
    stream.endAtExpiry();
    if (stream.closed) return;
    // A client that takes nothing while bytes wait (catch-up waiting to drain, or live) is let go.
    const unwatch = dropWhenStalled(res, hub.settings.stallMs, () => hub.countStalled(stream));
    res.once('close', unwatch);
    await catchUp(req, deps, stream, resume, firstPage);
  };
}

/** Pages of history after `resume` until the stream meets the hub, then live. */
async function catchUp(
  req: Request,
  deps: ChangesRouteDeps,
  stream: ChangeStream,
  resume: ResumePoint,
  firstPage: FeedRow[],
): Promise<void> {
  const hub = deps.hub;
  if (resume === null) {
    stream.goLive(hub.position!);
    return;
  }
  let cursor = resume;
  let page = firstPage;
  // The first page was read before the stream opened: whatever the hub saw since, read again.
  let askedAt = 0;
  try {
    for (;;) {
      if (page.length) {
        const ok = stream.writeRows(page);
        cursor = page[page.length - 1]!.id;
        if (!ok) await stream.drained();
      }
      if (stream.closed) return;
      // Caught up with the hub (checked and switched in one tick): its events after `cursor` follow.
      // An empty page below what the hub had seen when it was asked for means rows gone: go on live.
      if (cursor >= hub.position! || (page.length === 0 && cursor < askedAt)) {
        stream.goLive(cursor);
        return;
      }
      askedAt = hub.position!;
      page = await activitiesAfter(deps.knex, cursor, FEED_PAGE_ROWS);
    }
  } catch (err) {
    req.log?.warn({ err: (err as Error).message }, 'change stream: reading the history failed');
    stream.end('the history could not be read; reconnect with Last-Event-ID to resume');
  }
}
