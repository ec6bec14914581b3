import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import type { CommandResult } from '../../domain/commands/command';
import {
  DomainError,
  badRequest,
  notFound,
  unsupportedMediaType,
  validationFailed,
} from '../../domain/errors/domain-error';
import { decodeId } from '../../domain/ids/id-codec';
import { newCommandId } from '../../domain/writes/command-ids';
import { etagOf } from '../../domain/writes/entity-version';
import {
  SUBSCRIPTION_TYPE,
  subscriptionLocation,
  urlProblem,
  validateSubscription,
} from '../../domain/webhooks/subscription';
import { parseSubscriptionPatch, urlsSetBy } from '../../domain/webhooks/subscription-patch';
import type { SubscriptionCommand } from '../../domain/webhooks/subscription-command';
import {
  findSubscription,
  findSubscriptionSecret,
  listDeliveries,
  listSubscriptions,
  countSubscriptions,
} from '../../db/webhooks/subscriptions';
import type { WebhooksConfig } from '../../infra/config/load-config';
import { targetRefusal } from '../../infra/webhooks/address-guard';
import { callerOf } from '../auth/caller';
import type { CommandBus } from '../commands/command-bus';
import { sendCommand } from '../commands/send-command';

export interface SubscriptionRouteDeps {
  knex: Knex;
  commandBus: CommandBus;
  commandTimeoutMs: number;
  webhooks: WebhooksConfig;
  maxTop: number;
  maxPatchOperations: number;
}

/** Page size of the listings when `$top` is not given. */
export const DEFAULT_SUBSCRIPTIONS_TOP = 50;

const LISTING_PARAMS = new Set(['$top', '$skip', '$count']);

function pageOf(req: Request, maxTop: number, counts: boolean): { top: number; skip: number; count: boolean } {
  const query = req.query as Record<string, unknown>;
  const unknown = Object.keys(query).find((name) => !LISTING_PARAMS.has(name) || (!counts && name === '$count'));
  if (unknown) {
    throw badRequest(`unknown query parameter '${unknown.slice(0, 100)}' (use $top, $skip${counts ? ', $count' : ''})`);
  }
  const number = (name: string, fallback: number, max?: number) => {
    const raw = query[name];
    if (raw === undefined) return fallback;
    if (typeof raw !== 'string' || !/^[0-9]{1,9}$/.test(raw)) {
      throw badRequest(`${name}: '${String(raw).slice(0, 100)}' is not a non-negative integer`);
    }
    const n = Number(raw);
    if (max !== undefined && n > max) throw badRequest(`${name}: ${n} exceeds the maximum of ${max} (MAX_TOP)`);
    return n;
  };
  const count = query.$count;
  if (count !== undefined && count !== 'true' && count !== 'false') {
    throw badRequest(`$count: expected true or false, found '${String(count).slice(0, 100)}'`);
  }
  return {
    top: number('$top', Math.min(DEFAULT_SUBSCRIPTIONS_TOP, maxTop), maxTop),
    skip: number('$skip', 0),
    count: count === 'true',
  };
}

function keyOf(text: string): number {
  const id = decodeId(SUBSCRIPTION_TYPE, text);
  if (id === null) throw missing(text);
  return id;
}

function missing(key: string) {
  return notFound(`${SUBSCRIPTION_TYPE} '${key.slice(0, 100)}' does not exist.`);
}

/**
 * `/Subscriptions` (AdminOnly, DESIGN §16): webhook subscriptions and their delivery attempts. Reads
 * go to Postgres directly; writes are commands, applied by a command worker and awaited like entity
 * writes (202 + `/Commands/<id>` past COMMAND_TIMEOUT_MS). The target URL is checked here, before
 * anything is queued: its shape, then where DNS says it points (the private-network guard). The
 * secret is shown once, in the answer to POST, read from the row the command created.
 */
export function subscriptionHandlers(deps: SubscriptionRouteDeps) {
  /** 400 naming Url when a URL points somewhere the guard refuses (or does not resolve). */
  async function assertTargetAllowed(urls: readonly unknown[]): Promise<void> {
    const errors: string[] = [];
    for (const url of urls) {
      const shape = urlProblem(url, deps.webhooks.limits);
      if (shape) {
        errors.push(`${SUBSCRIPTION_TYPE}.Url: ${shape}`);
        continue;
      }
      const refusal = await targetRefusal(new URL(url as string), deps.webhooks.allowPrivateNetworks);
      if (refusal) errors.push(`${SUBSCRIPTION_TYPE}.Url: ${refusal}`);
    }
    if (errors.length) throw validationFailed(errors);
  }

  function command(req: Request, fields: Omit<SubscriptionCommand, 'commandId' | 'subject' | 'issuedAt'>) {
    const ifMatch = fields.name === 'subscription-create' ? undefined : req.get('if-match');
    return {
      commandId: newCommandId(),
      subject: callerOf(req).subject,
      issuedAt: new Date().toISOString(),
      ...(ifMatch === undefined ? {} : { ifMatch }),
      ...fields,
    } as SubscriptionCommand;
  }

  /** Sends the command; the success, or undefined once 202 was answered; throws its failure. */
  async function execute(req: Request, res: Response, sent: SubscriptionCommand) {
    const result = await sendCommand<CommandResult>(req, res, deps.commandBus, sent, deps.commandTimeoutMs);
    if (result === undefined) return undefined;
    if (!result.ok) throw DomainError.from(result.failure);
    return result;
  }

  const list: RequestHandler = async (req: Request, res: Response) => {
    const page = pageOf(req, deps.maxTop, true);
    const [items, total] = await Promise.all([
      listSubscriptions(deps.knex, page),
      page.count ? countSubscriptions(deps.knex) : Promise.resolve(undefined),
    ]);
    if (total !== undefined) res.setHeader('X-Total-Count', String(total));
    res.json(items);
  };

  const create: RequestHandler = async (req: Request, res: Response) => {
    if (!req.is('application/json')) throw unsupportedMediaType('Send the subscription as application/json.');
    const checked = validateSubscription(req.body, deps.webhooks.limits);
    if (!checked.ok) throw validationFailed(checked.errors);
    await assertTargetAllowed([checked.value.Url]);
    const result = await execute(req, res, command(req, { name: 'subscription-create', body: checked.value }));
    if (!result) return;
    const [created, secret] = await Promise.all([
      findSubscription(deps.knex, result.dbId),
      findSubscriptionSecret(deps.knex, result.dbId),
    ]);
    // Deleted again before this read (another admin): the create happened, the row is gone.
    if (!created || !secret) throw missing(result.encodedId);
    res
      .status(201)
      .location(subscriptionLocation(created.body.Id))
      .setHeader('ETag', etagOf(created.version))
      .json({ ...created.body, Secret: secret });
  };

  const get: RequestHandler = async (req: Request, res: Response) => {
    const found = await findSubscription(deps.knex, keyOf(req.params.id as string));
    if (!found) throw missing(req.params.id as string);
    res.setHeader('ETag', etagOf(found.version)).json(found.body);
  };

  const patch: RequestHandler = async (req: Request, res: Response) => {
    const key = keyOf(req.params.id as string);
    const matched = req.is('application/json-patch+json');
    if (matched === false) throw unsupportedMediaType('PATCH requests take application/json-patch+json.');
    const patch = parseSubscriptionPatch(matched === null ? undefined : req.body, deps.maxPatchOperations);
    await assertTargetAllowed(urlsSetBy(patch));
    const result = await execute(req, res, command(req, { name: 'subscription-patch', key, patch }));
    if (!result) return;
    const updated = await findSubscription(deps.knex, key);
    if (!updated) throw missing(req.params.id as string);
    res.setHeader('ETag', etagOf(updated.version)).json(updated.body);
  };

  const remove: RequestHandler = async (req: Request, res: Response) => {
    const key = keyOf(req.params.id as string);
    const result = await execute(req, res, command(req, { name: 'subscription-delete', key }));
    if (!result) return;
    res.status(204).end();
  };

  const deliveries: RequestHandler = async (req: Request, res: Response) => {
    const page = pageOf(req, deps.maxTop, false);
    const key = keyOf(req.params.id as string);
    if (!(await findSubscription(deps.knex, key))) throw missing(req.params.id as string);
    res.json(await listDeliveries(deps.knex, key, page));
  };

  return {
    listSubscriptions: list,
    createSubscription: create,
    getSubscription: get,
    patchSubscription: patch,
    deleteSubscription: remove,
    listDeliveries: deliveries,
  };
}
