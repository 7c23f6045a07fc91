import { isAllowedAddress } from './address-policy';

describe('isAllowedAddress', () => {
  const publicAddresses = [
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255', // just below carrier-grade NAT
    '100.128.0.0', // just above it
    '172.15.255.255',
    '172.32.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8', // mapped public IPv4
    '::ffff:808:808',
    '64:ff9b::8.8.8.8', // NAT64 of a public IPv4
  ];

  const refusedAddresses = [
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.255',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '169.254.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.88.99.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe', // mapped 169.254.169.254
    '64:ff9b::10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::127.0.0.1',
    'fc00::1',
    'fd00:ec2::254', // AWS metadata over IPv6
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'ff02::1',
    '2001:db8::1',
    '100::1',
    '::127.0.0.1', // deprecated IPv4-compatible form
    '2002:a00:1::', // 6to4 wrapping 10.0.0.1
    '2001::1', // Teredo
    'not an address',
    '',
    '0177.0.0.1', // octal forms are normalised by URL parsing before they get here
    'localhost',
  ];

  it.each(publicAddresses)('allows public %s', (ip) => {
    expect(isAllowedAddress(ip, { allowLoopback: false })).toBe(true);
    expect(isAllowedAddress(ip, { allowLoopback: true })).toBe(true);
  });

  it.each(refusedAddresses)('refuses %s', (ip) => {
    expect(isAllowedAddress(ip, { allowLoopback: false })).toBe(false);
  });

  it.each(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:0:0:1'])(
    'allows loopback %s only when allowLoopback is set',
    (ip) => {
      expect(isAllowedAddress(ip, { allowLoopback: false })).toBe(false);
      expect(isAllowedAddress(ip, { allowLoopback: true })).toBe(true);
    },
  );

  it.each(['10.0.0.1', '169.254.169.254', '192.168.0.1', '0.0.0.0', '::', 'fe80::1', 'fd00::1', '64:ff9b::127.0.0.1'])(
    'still refuses non-loopback private %s when allowLoopback is set',
    (ip) => {
      expect(isAllowedAddress(ip, { allowLoopback: true })).toBe(false);
    },
  );
});
