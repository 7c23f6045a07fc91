import { isIPv6 } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Request } from 'express';
import { type LengthAwarePage, lengthAwarePage, type PageLocation, type PageQuery } from '@app/contracts';

/** A host name of letters, digits and inner hyphens (or an IPv4 address), or an IPv6 address in brackets, with a port. */
const HOST =
  /^(?:(?<name>[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)|\[(?<ipv6>[0-9a-f:.]+)\])(?::(?<port>\d{1,5}))?$/i;

/**
 * Absolute path and carried-over query of a list request, for the envelope's links. The origin is APP_URL, which
 * production requires. Without it (development, tests) a client's headers are never echoed as they are, since a link
 * is something a client follows: a forwarded protocol and host count only from a proxy TRUST_PROXY trusts, and only
 * `http`/`https` and a plain `host[:port]`; else the connection's own protocol, and the Host when it names the address
 * the server listens on, else that address itself.
 */
export function pageLocation(request: Request, appUrl?: string): PageLocation {
  const origin = appUrl ?? `${protocolOf(request)}://${hostOf(request)}`;
  const url = new URL(request.originalUrl, 'http://placeholder');
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) if (key !== 'page') query[key] = value;
  return { path: `${origin}${url.pathname}`, query };
}

/** A list route's answer: a page of `total` as `query` asked for it, its links made as `pageLocation` makes them. */
export function pageOfList<T>(
  data: T[],
  total: number,
  query: PageQuery,
  request: Request,
  appUrl?: string,
): LengthAwarePage<T> {
  return lengthAwarePage(data, total, { page: query.page, perPage: query.per_page }, pageLocation(request, appUrl));
}

/** Whether the peer is a proxy TRUST_PROXY names: Express's own test, as its `protocol` and `host` make it. */
function fromTrustedProxy(request: Request): boolean {
  const trust = request.app.get('trust proxy fn') as
    ((address: string | undefined, hop: number) => boolean) | undefined;
  return trust?.(request.socket.remoteAddress, 0) ?? false;
}

/** The first value of a forwarded header, as a proxy chain appends to it; a trusted proxy's only. */
function forwarded(request: Request, name: 'x-forwarded-proto' | 'x-forwarded-host'): string | undefined {
  const value = request.headers[name];
  if (typeof value !== 'string' || !fromTrustedProxy(request)) return undefined;
  return value.split(',')[0].trim().toLowerCase();
}

function protocolOf(request: Request): string {
  const sent = forwarded(request, 'x-forwarded-proto');
  if (sent === 'http' || sent === 'https') return sent;
  return (request.socket as Partial<TLSSocket>).encrypted ? 'https' : 'http';
}

function hostOf(request: Request): string {
  const sent = forwarded(request, 'x-forwarded-host');
  return sent && isHost(sent) ? sent : listeningHost(request);
}

function isHost(text: string): boolean {
  const match = HOST.exec(text);
  if (!match?.groups) return false;
  const { name, ipv6, port } = match.groups;
  if (name !== undefined && name.length > 253) return false;
  if (ipv6 !== undefined && !isIPv6(ipv6)) return false;
  return port === undefined || Number(port) <= 65535;
}

function listeningHost(request: Request): string {
  const sent = request.headers.host;
  const { localAddress = '127.0.0.1', localPort } = request.socket;
  // An IPv4 connection on a dual-stack socket reads `::ffff:127.0.0.1`.
  const plain = localAddress.replace(/^::ffff:/, '');
  const own = `${plain.includes(':') ? `[${plain}]` : plain}:${localPort}`;
  const local = new Set([own, `localhost:${localPort}`, `127.0.0.1:${localPort}`, `[::1]:${localPort}`]);
  return sent && local.has(sent.toLowerCase()) ? sent : own;
}
