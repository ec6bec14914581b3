import test from 'ava';
import { addressRefusal, guardedLookup, targetRefusal } from '../../infra/webhooks/address-guard';

/** The private-network guard of webhooks (DESIGN §16): which addresses are refused, and the lookup that checks them. */

test('public unicast addresses pass; every special-purpose class is refused', (t) => {
  for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4009:81f::200e']) {
    t.is(addressRefusal(address), null, address);
  }
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['192.0.2.10', 'reserved'],
    // IPv4-mapped and IPv4-compatible IPv6 are judged as the IPv4 address they carry.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::10.1.2.3', 'private'],
    ['::169.254.169.254', 'linkLocal'],
    ['::2', 'unspecified'],
    // IPv6 forms that embed IPv4 addresses (NAT64, 6to4) are not unicast either.
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
  ];
  for (const [address, range] of refused) t.is(addressRefusal(address), range, address);
  t.is(addressRefusal('[::1]'), 'loopback', 'brackets of a URL host');
  t.is(addressRefusal('fe80::1%eth0'), 'linkLocal', 'a zone id');
  t.is(addressRefusal('not-an-address'), 'not an IP address');
});

test('an IPv4-compatible IPv6 literal in a URL is judged as the IPv4 address it carries', async (t) => {
  // http://[::127.0.0.1]/ parses to the host [::7f00:1], which ipaddr.js alone calls unicast.
  t.regex((await targetRefusal(new URL('http://[::127.0.0.1]/'), false)) ?? '', /loopback/);
  t.regex((await targetRefusal(new URL('http://[::a9fe:a9fe]/'), false)) ?? '', /linkLocal/);
});

test('targetRefusal judges literal hosts without DNS and names by every address they resolve to', async (t) => {
  t.regex((await targetRefusal(new URL('http://[::ffff:127.0.0.1]/'), false)) ?? '', /loopback/);
  t.regex((await targetRefusal(new URL('http://2130706433/'), false)) ?? '', /refused: 127\.0\.0\.1, a loopback/);
  t.regex((await targetRefusal(new URL('http://localhost:9/'), false)) ?? '', /^refused: localhost resolves to/);
  t.is(await targetRefusal(new URL('http://93.184.215.14/'), false), null);
  t.is(await targetRefusal(new URL('http://127.0.0.1/'), true), null, 'allowed by WEBHOOK_ALLOW_PRIVATE_NETWORKS');
  t.regex((await targetRefusal(new URL('http://no-such-host.invalid/'), false)) ?? '', /does not resolve/);
});

test('guardedLookup refuses a name resolving to loopback and hands over only checked addresses', async (t) => {
  const lookup = (allow: boolean, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      guardedLookup(allow)('localhost', { all }, (err, address) => resolve({ err, address })),
    );
  const refused = await lookup(false, false);
  t.is(refused.err?.code, 'EWEBHOOKADDRESS');
  t.regex(refused.err?.message ?? '', /^refused: localhost resolves to .*loopback/);
  const allowed = await lookup(true, true);
  t.is(allowed.err, null);
  t.true(Array.isArray(allowed.address) && allowed.address.length > 0);
  const one = await lookup(true, false);
  t.is(typeof one.address, 'string');
});
