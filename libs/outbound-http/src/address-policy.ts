import { BlockList, isIP } from 'node:net';

export interface AddressPolicyOptions {
  /** Admits 127.0.0.0/8 and ::1 only, for local development and tests; every other private range stays refused. */
  allowLoopback: boolean;
}

// Everything that is not public unicast: a user-supplied URL must never reach our own network, cloud metadata
// endpoints or special-purpose ranges.
const refusedIpv4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, includes the 169.254.169.254 metadata endpoint
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes 255.255.255.255
] as const) {
  refusedIpv4.addSubnet(network, prefix, 'ipv4');
}

// Only 2000::/3 is allocated as global unicast; inside it, refuse documentation, the IETF protocol block (Teredo
// and friends) and 6to4 (whose embedded IPv4 may be private).
const globalUnicastIpv6 = new BlockList();
globalUnicastIpv6.addSubnet('2000::', 3, 'ipv6');
const refusedIpv6 = new BlockList();
for (const [network, prefix] of [
  ['2001:db8::', 32],
  ['2001::', 23],
  ['2002::', 16],
] as const) {
  refusedIpv6.addSubnet(network, prefix, 'ipv6');
}

/** True when `ip` is a public unicast address we may connect to. Anything unparsable is refused. */
export function isAllowedAddress(ip: string, options: AddressPolicyOptions): boolean {
  const version = isIP(ip);
  if (version === 4) return isAllowedIpv4(ip, options.allowLoopback);
  if (version !== 6 || ip.includes('%')) return false; // zone ids only make sense for link-local addresses

  const groups = expandIpv6(ip);
  if (groups === undefined) return false;
  const embedded = embeddedIpv4(groups);
  if (embedded !== undefined) {
    // NAT64 reaches the embedded address through a gateway, never our loopback, so only the mapped form may be.
    const isMapped = groups[5] === 0xffff;
    return isAllowedIpv4(embedded, isMapped && options.allowLoopback);
  }
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return options.allowLoopback; // ::1
  return globalUnicastIpv6.check(ip, 'ipv6') && !refusedIpv6.check(ip, 'ipv6');
}

function isAllowedIpv4(ip: string, allowLoopback: boolean): boolean {
  if (allowLoopback && ip.split('.')[0] === '127') return true;
  return !refusedIpv4.check(ip, 'ipv4');
}

/** The IPv4 address inside ::ffff:0:0/96 (mapped) or 64:ff9b::/96 (NAT64), else undefined. */
function embeddedIpv4(groups: number[]): string | undefined {
  const isMapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  const isNat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
  if (!isMapped && !isNat64) return undefined;
  return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}

/** Eight 16-bit groups of an IPv6 address already validated by `isIP`, expanding `::` and a dotted IPv4 tail. */
function expandIpv6(ip: string): number[] | undefined {
  let text = ip.toLowerCase();
  const dottedTail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dottedTail) {
    const [a, b, c, d] = dottedTail[1].split('.').map(Number);
    text = text.slice(0, dottedTail.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups];
  return groups.length === 8 ? groups.map((group) => parseInt(group, 16)) : undefined;
}
