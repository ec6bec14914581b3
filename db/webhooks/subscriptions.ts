import type { Knex } from 'knex';
import { encodeId } from '../../domain/ids/id-codec';
import { SUBSCRIPTION_TYPE, type SubscriptionBody, type SubscriptionInput } from '../../domain/webhooks/subscription';
import type { RetainedTable } from '../commands/retention';

/**
 * Webhook subscriptions and their delivery attempts in Postgres (DESIGN §16). The command worker
 * writes subscriptions (in the command's transaction), the API reads them, the notification workers
 * read the active ones per burst and record every attempt.
 */

const TABLE = 'webhook_subscriptions';
const DELIVERIES = 'webhook_deliveries';

interface Row {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  active: boolean;
  secret: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  version: number;
}

/** What GET shows (never the secret), and the row version its ETag names. */
export interface StoredSubscription {
  body: SubscriptionBody;
  version: number;
}

const SHOWN = ['id', 'url', 'events', 'description', 'active', 'created_at', 'updated_at', 'version'];

function stored(row: Omit<Row, 'secret' | 'created_by'>): StoredSubscription {
  return {
    body: {
      Id: encodeId(SUBSCRIPTION_TYPE, row.id),
      Url: row.url,
      Events: row.events,
      Description: row.description,
      Active: row.active,
      CreatedAt: row.created_at.toISOString(),
      UpdatedAt: row.updated_at.toISOString(),
    },
    version: row.version,
  };
}

export async function listSubscriptions(knex: Knex, page: { top: number; skip: number }): Promise<SubscriptionBody[]> {
  const rows = await knex(TABLE).select<Row[]>(SHOWN).orderBy('id').limit(page.top).offset(page.skip);
  return rows.map((row) => stored(row).body);
}

export async function countSubscriptions(knex: Knex | Knex.Transaction): Promise<number> {
  const [row] = await knex(TABLE).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

export async function findSubscription(knex: Knex, id: number): Promise<StoredSubscription | null> {
  const row = await knex(TABLE).select<Row[]>(SHOWN).where('id', id).first();
  return row ? stored(row) : null;
}

/**
 * The secret of a subscription just created, for its 201 answer only: the create command generated
 * it in its transaction, and it travels from Postgres to the client without passing through Redis.
 */
export async function findSubscriptionSecret(knex: Knex, id: number): Promise<string | null> {
  const row = await knex<Row>(TABLE).select('secret').where('id', id).first();
  return row?.secret ?? null;
}

/** The row under a lock held to the end of the transaction (patch, delete); null when gone. */
export async function lockSubscription(trx: Knex.Transaction, id: number): Promise<StoredSubscription | null> {
  const row = await trx(TABLE).select<Row[]>(SHOWN).where('id', id).forUpdate().first();
  return row ? stored(row) : null;
}

/** Serializes subscription creates, so WEBHOOK_MAX_SUBSCRIPTIONS holds with creates racing. */
export async function lockSubscriptionCreates(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtext('webhook_subscriptions.create'))");
}

export async function insertSubscription(
  trx: Knex.Transaction,
  input: SubscriptionInput,
  secret: string,
  createdBy: string,
): Promise<{ id: number; version: number }> {
  const [row] = await trx<Row>(TABLE)
    .insert({
      url: input.Url,
      events: JSON.stringify(input.Events) as unknown as string[],
      description: input.Description,
      active: input.Active,
      secret,
      created_by: createdBy,
    })
    .returning(['id', 'version']);
  return { id: row!.id, version: row!.version };
}

export async function updateSubscription(
  trx: Knex.Transaction,
  id: number,
  input: Pick<SubscriptionInput, 'Url' | 'Events' | 'Active'>,
): Promise<number> {
  const [row] = await trx<Row>(TABLE)
    .where('id', id)
    .update({
      url: input.Url,
      events: JSON.stringify(input.Events) as unknown as string[],
      active: input.Active,
      updated_at: trx.fn.now() as unknown as Date,
      version: trx.raw('version + 1') as unknown as number,
    })
    .returning(['version']);
  return row!.version;
}

export async function deleteSubscription(trx: Knex.Transaction, id: number): Promise<void> {
  await trx(TABLE).where('id', id).delete();
}

/** Every active subscription's patterns: what the notification workers match a burst against. */
export async function activeSubscriptions(knex: Knex): Promise<{ id: number; events: string[] }[]> {
  return knex<Row>(TABLE).select('id', 'events').where('active', true).orderBy('id');
}

/** What a delivery needs to know before it sends, read in one statement. */
export interface DeliveryTarget {
  url: string;
  secret: string;
  active: boolean;
  /** A 2xx is recorded for this event and subscription already: nothing is sent again. */
  delivered: boolean;
  /** The event's activity-log entry (its key), or null when it has none. */
  activityId: number | null;
}

/** Where and how to deliver `eventId` to subscription `id`: null once the subscription is deleted. */
export async function deliveryTarget(knex: Knex, id: number, eventId: string): Promise<DeliveryTarget | null> {
  const { rows } = await knex.raw<{ rows: (Omit<DeliveryTarget, 'activityId'> & { activity_id: number | null })[] }>(
    `select s.url, s.secret, s.active,
            exists (select 1 from ${DELIVERIES} d where d.subscription_id = s.id and d.event_id = :eventId
                    and d.status_code between 200 and 299) as delivered,
            (select a.id from activities a where a.event_id = :eventId) as activity_id
     from ${TABLE} s where s.id = :id`,
    { id, eventId },
  );
  const row = rows[0];
  return row
    ? { url: row.url, secret: row.secret, active: row.active, delivered: row.delivered, activityId: row.activity_id }
    : null;
}

/** One delivery attempt as `/Subscriptions/<id>/Deliveries` shows it. */
export interface DeliveryAttempt {
  Id: string;
  EventId: string;
  EventType: string;
  Attempt: number;
  StatusCode: number | null;
  DurationMs: number;
  Error: string | null;
  NextRetryAt: string | null;
  AttemptedAt: string;
}

interface DeliveryRow {
  id: string;
  subscription_id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  next_retry_at: Date | null;
  attempted_at: Date;
}

export interface AttemptRecord {
  subscriptionId: number;
  eventId: string;
  eventType: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  nextRetryAt: Date | null;
}

/** Postgres' foreign_key_violation: the subscription's delete committed while the attempt was recorded. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Records an attempt; false when the subscription was deleted meanwhile (it takes its deliveries
 * with it: nothing recorded). The `exists` covers a delete committed before this statement; one
 * committed while it runs shows as the foreign key's violation, which means the same.
 */
export async function recordAttempt(knex: Knex, attempt: AttemptRecord): Promise<boolean> {
  try {
    const result = await knex.raw<{ rowCount: number }>(
      `insert into ${DELIVERIES} (subscription_id, event_id, event_type, attempt, status_code, duration_ms, error, next_retry_at)
       select ?, ?, ?, ?, ?, ?, ?, ? where exists (select 1 from ${TABLE} where id = ?)`,
      [
        attempt.subscriptionId,
        attempt.eventId,
        attempt.eventType,
        attempt.attempt,
        attempt.statusCode,
        attempt.durationMs,
        attempt.error,
        attempt.nextRetryAt,
        attempt.subscriptionId,
      ],
    );
    return result.rowCount === 1;
  } catch (err) {
    if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) return false;
    throw err;
  }
}

/** Recent attempts, newest first. */
export async function listDeliveries(
  knex: Knex,
  subscriptionId: number,
  page: { top: number; skip: number },
): Promise<DeliveryAttempt[]> {
  const rows = await knex<DeliveryRow>(DELIVERIES)
    .where('subscription_id', subscriptionId)
    .orderBy('id', 'desc')
    .limit(page.top)
    .offset(page.skip);
  return rows.map((row) => ({
    Id: String(row.id),
    EventId: row.event_id,
    EventType: row.event_type,
    Attempt: row.attempt,
    StatusCode: row.status_code,
    DurationMs: row.duration_ms,
    Error: row.error,
    NextRetryAt: row.next_retry_at ? row.next_retry_at.toISOString() : null,
    AttemptedAt: row.attempted_at.toISOString(),
  }));
}

/** Delivery attempts age out by when they were made (WEBHOOK_DELIVERY_RETENTION_HOURS). */
export const DELIVERY_RETENTION: RetainedTable = {
  table: DELIVERIES,
  key: 'id',
  timeColumn: 'attempted_at',
};
