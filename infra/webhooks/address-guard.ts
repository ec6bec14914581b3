import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The private-network guard of webhooks (DESIGN §16): a target must be a public unicast address.
 * The address classes come from ipaddr.js (its IANA special-purpose ranges, kept up to date by a
 * library with hundreds of millions of downloads a month, rather than a hand-written list): an
 * address is allowed only when ipaddr.js calls it `unicast`, so loopback, private, link-local,
 * unique-local, unspecified, multicast, broadcast, CGNAT, documentation/benchmark ranges, NAT64,
 * 6to4 and Teredo are all refused, and IPv4-mapped / IPv4-compatible IPv6 (`::ffff:127.0.0.1`) is
 * judged as the IPv4 address it carries.
 *
 * Checked twice: when a subscription is written (the API resolves the host then) and at every
 * delivery, where the HTTP request's own `lookup` validates every address DNS gives and the socket
 * connects only to those, so a name that resolves differently the second time (DNS rebinding)
 * gains nothing.
 */

/** Why an address is refused (its ipaddr.js range, e.g. `loopback`), or null for a public unicast one. */
export function addressRefusal(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  // IPv4-compatible IPv6 (::a.b.c.d, RFC 4291 §2.5.5.1, deprecated) carries an IPv4 address too, but
  // ipaddr.js neither converts it nor names its range (`::127.0.0.1` would be "unicast"). `::` and
  // `::1` keep their own IPv6 meaning.
  if (parsed.kind() === 'ipv6') {
    const parts = (parsed as ipaddr.IPv6).parts;
    if (parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || parts[7]! > 1)) {
      parsed = new ipaddr.IPv4(parsed.toByteArray().slice(12));
    }
  }
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

/** Thrown (and passed to the socket) when a target's address is refused. */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
}

function refusedError(host: string, address: string, reason: string): RefusedAddressError {
  const shown = host === address ? address : `${host} resolves to ${address}`;
  return new RefusedAddressError(`refused: ${shown}, a ${reason} address (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`);
}

/** The hostname of a URL as the socket gets it: brackets of an IPv6 literal removed. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function lookupAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );
}

/**
 * Why the URL's host may not be a webhook target, or null: every address it resolves to must be
 * public (unless `allowPrivate`). A host that does not resolve is refused too.
 */
export async function targetRefusal(url: URL, allowPrivate: boolean): Promise<string | null> {
  const host = hostOf(url);
  if (allowPrivate) return null;
  if (isIP(host)) {
    const reason = addressRefusal(host);
    return reason ? refusedError(host, host, reason).message : null;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host);
  } catch (err) {
    return `host ${JSON.stringify(host.slice(0, 100))} does not resolve (${(err as { code?: string }).code ?? 'DNS error'})`;
  }
  for (const { address } of addresses) {
    const reason = addressRefusal(address);
    if (reason) return refusedError(host, address, reason).message;
  }
  return addresses.length ? null : `host ${JSON.stringify(host.slice(0, 100))} has no address`;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves the name, refuses it when any address is not public
 * (unless `allowPrivate`) and hands the socket only the addresses it checked. Node calls no lookup
 * for an IP literal: check those with `targetRefusal` before the request.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!allowPrivate) {
        for (const { address } of addresses) {
          const reason = addressRefusal(address);
          if (reason) return callback(refusedError(hostname, address, reason), []);
        }
      }
      if (addresses.length === 0)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
