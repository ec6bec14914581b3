import type { PatchOperation } from '../commands/command';
import type { WriteOrigin } from '../commands/write-origin';
import type { SubscriptionInput } from './subscription';

/**
 * The queue contract of subscription writes (DESIGN §16): like entity writes they are commands on
 * the `commands` queue, signed by the API and applied by a command worker in one transaction with
 * their command_log row; they emit no domain events (a subscription is configuration, not a record,
 * and publishing its changes would hand its URL to every subscriber of `*`).
 *
 * The create command carries no secret: the worker generates it inside the transaction and the API
 * reads it back from Postgres once the command has succeeded, so it never sits in Redis (job data,
 * return value or event stream).
 */

export const SUBSCRIPTION_COMMAND_NAMES = ['subscription-create', 'subscription-patch', 'subscription-delete'] as const;
export type SubscriptionCommandName = (typeof SUBSCRIPTION_COMMAND_NAMES)[number];

export interface SubscriptionCommand {
  commandId: string;
  name: SubscriptionCommandName;
  subject: string;
  issuedAt: string;
  /** The subscription's key (patch, delete). */
  key?: number;
  /** POST's body, validated (create). */
  body?: SubscriptionInput;
  /** PATCH's operations, shape-checked (patch). */
  patch?: PatchOperation[];
  /** `If-Match`, compared under the row lock (patch, delete). */
  ifMatch?: string;
  requestHash?: string;
  origin?: WriteOrigin;
  /** The API process waiting for the reply (its route, infra/command-replies.ts); absent: every process hears it. */
  replyTo?: string;
}

export function isSubscriptionCommandName(name: string): name is SubscriptionCommandName {
  return (SUBSCRIPTION_COMMAND_NAMES as readonly string[]).includes(name);
}
