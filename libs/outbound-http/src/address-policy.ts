import { isIP } from 'node:net';
import ipaddr, { type IPv4, type IPv6 } from 'ipaddr.js';

export interface AddressPolicyOptions {
  /** Admits 127.0.0.0/8 and ::1 only, for local development and tests; every other private range stays refused. */
  allowLoopback: boolean;
}

// Only 2000::/3 is allocated as global unicast (ipaddr.js calls every unlisted address `unicast`); inside it the
// IETF protocol block is refused whole, beyond the parts of it ipaddr.js names (Teredo, benchmarking, ORCHID...).
const GLOBAL_UNICAST_IPV6 = ipaddr.parseCIDR('2000::/3');
const IETF_PROTOCOL_ASSIGNMENTS = ipaddr.parseCIDR('2001::/23');

/**
 * True when `ip` is a public unicast address we may connect to: a user-supplied URL must never reach our own
 * network, cloud metadata endpoints or special-purpose ranges (ipaddr.js's classification of IANA's registries).
 * Anything unparsable is refused.
 */
export function isAllowedAddress(ip: string, options: AddressPolicyOptions): boolean {
  // Strict forms only: ipaddr.js also reads '127.1' and octal or hex parts. Zone ids only make sense for
  // link-local addresses.
  if (isIP(ip) === 0 || ip.includes('%')) return false;
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return isAllowedIpv4(address as IPv4, options.allowLoopback);
  const ipv6 = address as IPv6;
  if (ipv6.isIPv4MappedAddress()) return isAllowedIpv4(ipv6.toIPv4Address(), options.allowLoopback);
  const range = ipv6.range();
  // NAT64 reaches the embedded address through a gateway, never our loopback.
  if (range === 'rfc6052') return isAllowedIpv4(new ipaddr.IPv4(ipv6.toByteArray().slice(12)), false);
  if (range === 'loopback') return options.allowLoopback;
  return range === 'unicast' && ipv6.match(GLOBAL_UNICAST_IPV6) && !ipv6.match(IETF_PROTOCOL_ASSIGNMENTS);
}

function isAllowedIpv4(address: IPv4, allowLoopback: boolean): boolean {
  const range = address.range();
  return range === 'unicast' || (allowLoopback && range === 'loopback');
}
