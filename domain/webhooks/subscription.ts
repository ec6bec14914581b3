import { ALL_EVENT_NAMES } from '../events/domain-event';
import { storableText } from '../text/storable-text';
import type { Validated } from '../auth/role-assignment';
import { ajv } from '../validation/ajv-instance';

/**
 * Webhook subscriptions (DESIGN §16): where the service POSTs the events a subscription matches.
 * They are configuration, not records: no entity route, no domain events; written as commands
 * (domain/webhooks/subscription-command.ts) and read directly by the API.
 */
export const SUBSCRIPTION_TYPE = 'Subscription';

export const SUBSCRIPTIONS_PATH = '/Subscriptions';

export function subscriptionLocation(encodedId: string): string {
  return `${SUBSCRIPTIONS_PATH}/${encodedId}`;
}

/** Limits of one subscription (WEBHOOK_* settings; defaults here for code that has no config). */
export interface SubscriptionLimits {
  /** WEBHOOK_MAX_URL_LENGTH. */
  maxUrlLength: number;
  /** WEBHOOK_MAX_EVENT_PATTERNS: entries of `Events`. */
  maxEventPatterns: number;
  /** WEBHOOK_MAX_DESCRIPTION_LENGTH. */
  maxDescriptionLength: number;
}

export const DEFAULT_SUBSCRIPTION_LIMITS: SubscriptionLimits = {
  maxUrlLength: 2048,
  maxEventPatterns: 50,
  maxDescriptionLength: 1000,
};

/** What a client writes: POST's body, and what a PATCH must leave. */
export interface SubscriptionInput {
  Url: string;
  Events: string[];
  Description: string | null;
  Active: boolean;
}

/** A subscription as GET shows it: never its secret. */
export interface SubscriptionBody extends SubscriptionInput {
  Id: string;
  CreatedAt: string;
  UpdatedAt: string;
}

/** Members a client may send back unchanged from a GET; they are ignored, as on entities (DESIGN §10). */
const READ_ONLY = new Set(['Id', 'CreatedAt', 'UpdatedAt']);
const WRITABLE = new Set(['Url', 'Events', 'Description', 'Active']);

/** Paths a PATCH may change (DESIGN §16): the target, the patterns, on/off. */
export const PATCHABLE_MEMBERS: readonly string[] = ['Url', 'Events', 'Active'];

const at = (field: string) => `${SUBSCRIPTION_TYPE}.${field}`;

/** A short, storable quote of what the client sent (messages may name it). */
function quote(value: string): string {
  const text = storableText(value);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

let uriCheck: ((value: unknown) => boolean) | undefined;

/** ajv-formats' `uri`, the format openapi.json gives `Url` (entity URL fields use the same). */
function isUri(value: string): boolean {
  uriCheck ??= ajv().compile({ type: 'string', format: 'uri' });
  return uriCheck(value);
}

/**
 * The shape of a target URL: http(s), no credentials, no fragment, within the length limit. Where
 * its host points (private networks) is checked separately, with DNS (infra/webhooks/address-guard.ts).
 */
export function urlProblem(value: unknown, limits: SubscriptionLimits): string | null {
  if (value === undefined || value === null) return 'is required';
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > limits.maxUrlLength) {
    return `must be at most ${limits.maxUrlLength} characters (WEBHOOK_MAX_URL_LENGTH)`;
  }
  if (storableText(value) !== value) return 'must not contain U+0000 or unpaired surrogates';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${quote(value)} is not an absolute URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  // The WHATWG parser forgives what RFC 3986 does not (tabs and newlines dropped, spaces, `\\`,
  // non-ASCII): the Url is kept as sent and every answer shows it as `format: uri` (openapi.json).
  if (!isUri(value)) {
    return 'must be an RFC 3986 URI: no spaces, control or non-ASCII characters (percent-encode them, punycode the host)';
  }
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials (user:password@); the signature authenticates the service to the receiver';
  }
  if (url.hostname === '') return 'must name a host';
  if (url.hash !== '') return 'must not carry a fragment (#…)';
  return null;
}

/** Event type names a pattern matches: exact, a prefix ending in `*`, or `*` alone. */
export function patternMatches(pattern: string, eventType: string): boolean {
  if (pattern.endsWith('*')) return eventType.startsWith(pattern.slice(0, -1));
  return pattern === eventType;
}

/** Does any of the patterns match the event type? */
export function subscriptionMatches(patterns: readonly string[], eventType: string): boolean {
  return patterns.some((pattern) => patternMatches(pattern, eventType));
}

/** Why a pattern is refused, or null: it must name a known event type, or a prefix of at least one. */
function patternProblem(pattern: unknown): string | null {
  if (typeof pattern !== 'string') return 'must be a string';
  if (pattern === '') return 'must not be empty';
  if (pattern.length > 200) return 'must be at most 200 characters';
  if (pattern.indexOf('*') !== -1 && pattern.indexOf('*') !== pattern.length - 1) {
    return `${quote(pattern)}: \`*\` may only end a pattern (a prefix such as Scheme*) or stand alone`;
  }
  if (!ALL_EVENT_NAMES.some((name) => patternMatches(pattern, name))) {
    return pattern.endsWith('*')
      ? `${quote(pattern)} matches no event type`
      : `${quote(pattern)} is not an event type (e.g. SchemeCreated, SchemeUpdated, SchemeDeleted)`;
  }
  return null;
}

function eventsProblems(value: unknown, limits: SubscriptionLimits): string[] {
  if (value === undefined || value === null) return [`${at('Events')}: is required`];
  if (!Array.isArray(value)) return [`${at('Events')}: must be an array of event types or patterns`];
  if (value.length === 0) return [`${at('Events')}: must name at least one event type or pattern`];
  if (value.length > limits.maxEventPatterns) {
    return [`${at('Events')}: at most ${limits.maxEventPatterns} patterns (WEBHOOK_MAX_EVENT_PATTERNS)`];
  }
  const errors: string[] = [];
  value.forEach((pattern: unknown, i) => {
    const problem = patternProblem(pattern);
    if (problem) errors.push(`${at(`Events[${i}]`)}: ${problem}`);
  });
  return errors;
}

function descriptionProblem(value: unknown, limits: SubscriptionLimits): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > limits.maxDescriptionLength) {
    return `must be at most ${limits.maxDescriptionLength} characters (WEBHOOK_MAX_DESCRIPTION_LENGTH)`;
  }
  if (storableText(value) !== value) return 'must not contain U+0000 or unpaired surrogates';
  return null;
}

/**
 * Checks a whole subscription: POST's body (`Active` defaults to true) or the document a PATCH
 * leaves. Errors read `Subscription.<Field>: <message>`.
 */
export function validateSubscription(body: unknown, limits: SubscriptionLimits): Validated<SubscriptionInput> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, errors: [`${SUBSCRIPTION_TYPE}: must be a JSON object with Url and Events`] };
  }
  const record = body as Record<string, unknown>;
  const errors: string[] = [];
  for (const name of Object.keys(record)) {
    if (!WRITABLE.has(name) && !READ_ONLY.has(name)) {
      errors.push(`${at(storableText(name).slice(0, 100))}: is not a known field`);
    }
  }
  const url = urlProblem(record.Url, limits);
  if (url) errors.push(`${at('Url')}: ${url}`);
  errors.push(...eventsProblems(record.Events, limits));
  const description = descriptionProblem(record.Description, limits);
  if (description) errors.push(`${at('Description')}: ${description}`);
  const active = record.Active;
  if (active !== undefined && typeof active !== 'boolean') errors.push(`${at('Active')}: must be true or false`);
  if (errors.length) return { ok: false, errors };
  return {
    ok: true,
    value: {
      Url: record.Url as string,
      Events: [...new Set(record.Events as string[])],
      Description: (record.Description as string | null | undefined) ?? null,
      Active: (active as boolean | undefined) ?? true,
    },
  };
}
