import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';
import { statementsIn } from '../query/prepared-statements';

/**
 * The channel every activity-log insert NOTIFYs, with the largest id it added as the payload
 * (GET /Changes, DESIGN §16). NOTIFY is per database and delivered at commit, so a listener hears
 * of a row only once it is visible.
 */
export const ACTIVITY_CHANNEL = 'emapi_activities';

/**
 * The advisory lock (two-key form: this space, key 0) every writer of the activity log takes in its
 * transaction before it inserts. Serial ids are drawn when a row is inserted, not when it commits:
 * two notification workers inserting at once could commit id 11 before id 10, and a change feed
 * that had moved past 11 would never see 10. Under the lock, ids are drawn and committed in one
 * order, so "every activity with an id above X" is a complete answer once X has been seen. The lock
 * is held for one short statement per burst (its commit included): NOTIFY already serialises the
 * commits of notifying transactions (Postgres takes one lock on its notification queue at
 * pre-commit), so what it adds is the insert itself, a few ms per burst (see docs/changes.md).
 * The space is apart from db/search's (0x5ea4c4).
 */
export const ACTIVITY_LOCK_SPACE = 0xac7104;

/** The columns of an activity entry, from an event as JSON (`e`): the payload's or the outbox's copy. */
const ENTRY_COLUMNS = 'event_id, event_type, entity_type, entity_id, subject, occurred_at, changed_fields, command_id';
const ENTRY_VALUES = `(e->>'eventId')::uuid, e->>'name', e->>'entityType', e->>'entityId', e->>'subject',
  (e->>'occurredAt')::timestamptz, coalesce(e->'changedFields', '[]'::jsonb), e->>'commandId'`;

/**
 * Whether the event of outbox row `alias` is in the log: a scalar subquery with a LIMIT, which
 * Postgres always runs as an index probe per row. As EXISTS or an anti-join it was planned as a hash
 * of the whole log whenever the walk looked large to the planner (9 ms a burst at 31k entries).
 */
const RECORDED = (alias: string) =>
  `coalesce((select true from activities a where a.event_id = ${alias}.event_id limit 1), false)`;

/**
 * The entries of a burst, each entity's earlier events first. An event's job can be taken before an
 * earlier event of the same entity (concurrent jobs, several notification workers or command
 * workers, a publish the sweep retried): from each event's outbox row it walks back over that
 * entity's outbox rows (index outbox_entity) while they are unrecorded, and records what it found in
 * outbox order. An entity's writes commit one after the other (its row lock), so an earlier event's
 * row is committed, and visible here, before a later one is published. The walk stops at the first
 * recorded row: one step for an entity whose history is recorded, none from a `…Created` event (an
 * entity's first: keys are never reused). Its depth is the entity's unrecorded events, which only
 * grow while the notification workers are down, and bursts are taken oldest first. Events with no
 * outbox row (added by hand) follow, in the burst's order.
 */
const EARLIER_FIRST = `
with recursive given(e, n) as (select e, n from jsonb_array_elements(?::jsonb) with ordinality as x(e, n)),
walk(id, event, entity_type, entity_id, recorded) as (
  select o.id, o.event, o.event->>'entityType', o.event->>'entityId',
    ${RECORDED('o')}
  from given g join outbox o on o.event_id = (g.e->>'eventId')::uuid
  union
  select earlier.id, earlier.event, w.entity_type, w.entity_id,
    ${RECORDED('earlier')}
  from walk w cross join lateral (
    select o.id, o.event_id, o.event from outbox o
    where o.event->>'entityType' = w.entity_type and o.event->>'entityId' = w.entity_id and o.id < w.id
    order by o.id desc limit 1
  ) earlier
  where not w.recorded and w.event->>'name' not like '%Created'
),
chosen(e, src, n) as (
  select * from (select distinct on (id) event, 0, id from walk where not recorded order by id) unrecorded
  union all
  select g.e, 1, g.n from given g where not exists (select from outbox o where o.event_id = (g.e->>'eventId')::uuid)
)
insert into activities (${ENTRY_COLUMNS})
select ${ENTRY_VALUES} from chosen order by src, n
on conflict (event_id) do nothing
returning id`;

/** The entries of the events as given, in their order (no walk: for events refused together, one by one). */
const AS_GIVEN = `
insert into activities (${ENTRY_COLUMNS})
select ${ENTRY_VALUES} from jsonb_array_elements(?::jsonb) with ordinality as x(e, n) order by n
on conflict (event_id) do nothing
returning id`;

/**
 * Takes the log's lock and turns JIT compilation off for the rest of the transaction, in one round
 * trip. The planner estimates `jsonb_array_elements` at 100 rows and the recursive walk at 50 times
 * that, whatever the burst holds, so the insert's cost follows the tables' statistics when its plan
 * is made (62,000–205,000 in one benchmark run). Above Postgres's default `jit_above_cost` (100,000)
 * every execution of that plan was compiled: ~20 ms of a 17-event burst's 21 ms, against well under
 * 1 ms of work (`npm run bench`: 3.4 ms of Postgres CPU per PATCH, 0.08 per POST).
 */
const LOCK_WITHOUT_JIT = "select pg_advisory_xact_lock(?, 0), set_config('jit', 'off', true)";

export interface RecordOptions {
  /**
   * Record each entity's earlier unrecorded events first (the default). Off, the events are
   * recorded as given: for one event of a burst refused for its data, so that a malformed earlier
   * row cannot hold back the events after it.
   */
  earlierFirst?: boolean;
}

/**
 * Adds the activity-log entries of a burst of events (GET /Activities) in one statement, each
 * entity's entries in the order its writes committed; returns how many were new. The event id is
 * unique in the table, so a redelivered event or burst (at-least-once queues, a burst regrouped by
 * the sweep) adds nothing. The insert runs under ACTIVITY_LOCK_SPACE's lock and notifies
 * ACTIVITY_CHANNEL in the same transaction.
 */
export async function recordActivities(
  knex: Knex,
  events: readonly DomainEvent[],
  { earlierFirst = true }: RecordOptions = {},
): Promise<number> {
  if (events.length === 0) return 0;
  return knex.transaction(async (trx) => {
    await trx.raw(LOCK_WITHOUT_JIT, [ACTIVITY_LOCK_SPACE]);
    // Prepared on the connection: the walk's plan is most of its cost for a burst of one event.
    const { rows: inserted } = await (
      await statementsIn(trx)
    ).raw<{ rows: { id: number }[] }>(earlierFirst ? EARLIER_FIRST : AS_GIVEN, [JSON.stringify(events)]);
    if (inserted.length) {
      const last = inserted.reduce((max, row) => Math.max(max, row.id), 0);
      await trx.raw('select pg_notify(?, ?)', [ACTIVITY_CHANNEL, String(last)]);
    }
    return inserted.length;
  });
}
