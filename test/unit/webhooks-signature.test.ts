import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { generateSecret, signWebhook } from '../../domain/webhooks/signature';
import { parseRetrySchedule, retryDelay } from '../../domain/webhooks/retry-schedule';
import {
  patternMatches,
  subscriptionMatches,
  urlProblem,
  validateSubscription,
  DEFAULT_SUBSCRIPTION_LIMITS,
} from '../../domain/webhooks/subscription';

/**
 * Standard Webhooks signing checked against the `standardwebhooks` package (an independent
 * implementation), the retry schedule's parsing, and event pattern matching.
 */

test('secrets are whsec_ + base64 of 32 random bytes, each new', (t) => {
  const a = generateSecret();
  t.regex(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(Buffer.from(a.slice(6), 'base64').length, 32);
  t.not(generateSecret(), a);
});

test('signatures verify with standardwebhooks, and fail for another secret, id, time or body', (t) => {
  const secret = generateSecret();
  const id = '0b8e5d3c-6f1e-4f59-9a55-55d3b1c2a001';
  const body = JSON.stringify({ type: 'SchemeCreated', timestamp: '2026-11-23T10:00:00.000Z', data: { Id: 'abc' } });
  const now = Math.floor(Date.now() / 1000);
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(now),
    'webhook-signature': signWebhook(secret, id, now, body),
  };
  t.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  // The package's own signature is byte for byte the same.
  t.is(new Webhook(secret).sign(id, new Date(now * 1000), body), headers['webhook-signature']);
  t.throws(() => new Webhook(generateSecret()).verify(body, headers));
  t.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': `${id}x` }));
  t.throws(() => new Webhook(secret).verify(`${body} `, headers));
  t.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(now - 1) }));
});

test('WEBHOOK_RETRY_SCHEDULE parses durations and refuses anything else', (t) => {
  t.deepEqual(parseRetrySchedule('5s,30s,2m,10m,1h,6h,24h'), [5e3, 3e4, 12e4, 6e5, 36e5, 216e5, 864e5]);
  t.deepEqual(parseRetrySchedule(' 200ms , 0.5s '), [200, 500]);
  t.deepEqual(parseRetrySchedule(''), []);
  for (const bad of ['5', '5 s', '-1s', '0ms', '8d', 's', '1s,,2s', Array(21).fill('1s').join(',')]) {
    t.throws(() => parseRetrySchedule(bad), { instanceOf: RangeError }, bad);
  }
  t.is(retryDelay([200, 400], 1), 200);
  t.is(retryDelay([200, 400], 2), 400);
  t.is(retryDelay([200, 400], 3), undefined);
});

test('patterns: exact names, prefixes ending in *, and * alone', (t) => {
  t.true(patternMatches('SchemeCreated', 'SchemeCreated'));
  t.false(patternMatches('SchemeCreated', 'SchemeUpdated'));
  t.true(patternMatches('Scheme*', 'SchemeCompanyCreated'));
  t.false(patternMatches('Scheme*', 'CompanyCreated'));
  t.true(patternMatches('*', 'PortfolioDeleted'));
  t.true(subscriptionMatches(['CompanyCreated', 'Scheme*'], 'SchemeDeleted'));
  t.false(subscriptionMatches(['CompanyCreated'], 'CompanyUpdated'));
  const checked = validateSubscription(
    { Url: 'https://example.com/hook', Events: ['*', '*', 'SchemeCreated'] },
    DEFAULT_SUBSCRIPTION_LIMITS,
  );
  t.true(checked.ok);
  if (checked.ok)
    t.deepEqual(checked.value, {
      Url: 'https://example.com/hook',
      Events: ['*', 'SchemeCreated'],
      Description: null,
      Active: true,
    });
});

test('a Url the WHATWG parser forgives but RFC 3986 does not is refused: answers show Url as format uri', (t) => {
  for (const url of [
    'https://93.184.215.14\t/',
    'http://93.184.215.14/\n',
    'http://93.184.215.14/a b',
    'http://bücher.example/',
    'http://93.184.215.14\\x',
  ]) {
    const checked = validateSubscription({ Url: url, Events: ['*'] }, DEFAULT_SUBSCRIPTION_LIMITS);
    t.false(checked.ok, JSON.stringify(url));
    if (!checked.ok) t.regex(checked.errors[0]!, /^Subscription\.Url: must be an RFC 3986 URI/);
  }
  for (const url of ['http://[::1]:8080/x?y=%20#', 'https://xn--bcher-kva.example/hooks/1', 'http://2130706433/']) {
    t.is(urlProblem(url.replace(/#$/, ''), DEFAULT_SUBSCRIPTION_LIMITS), null, url);
  }
});
