import { lookup as dnsLookup } from 'node:dns';
import { isIP, Socket, type LookupFunction } from 'node:net';

/**
 * Test safety net, independent of the code under test: every socket opened while it is active must go to loopback,
 * so even a broken guard cannot send a packet off this machine. It also records each destination asked for.
 */
export function restrictSocketsToLoopback(): { destinations: string[]; restore: () => void } {
  const destinations: string[] = [];
  const originalConnect = Socket.prototype.connect;
  const spy = jest.spyOn(Socket.prototype, 'connect').mockImplementation(function (this: Socket, ...args: unknown[]) {
    // net.connect() hands over its arguments already normalised into an array.
    const normalised = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
    const options = normalised[0] as { host?: string; lookup?: LookupFunction } | undefined;
    if (options && typeof options === 'object' && typeof options.host === 'string') {
      const host = options.host;
      destinations.push(host);
      if (isIP(host) !== 0 && !isLoopback(host)) throw new Error(`Test safety net: refused socket to ${host}`);
      const resolve = options.lookup ?? (dnsLookup as unknown as LookupFunction);
      options.lookup = (hostname, lookupOptions, callback) =>
        resolve(hostname, lookupOptions, (error, address, family) => {
          const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
          if (!error && addresses.some((entry) => !isLoopback(entry))) {
            return callback(new Error(`Test safety net: ${hostname} resolved off loopback`), '');
          }
          callback(error, address, family);
        });
    }
    return originalConnect.apply(this, args as Parameters<Socket['connect']>);
  });
  return { destinations, restore: () => spy.mockRestore() };
}

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');
}
