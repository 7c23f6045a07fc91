import type { Request } from 'express';
import type { PageLocation } from '@app/contracts';

/**
 * Absolute path and carried-over query of a list request, for the envelope's links. The origin is APP_URL, which
 * production requires. Without it (development, tests) a client's `Host` is never echoed as it is, since a link is
 * something a client follows: the origin is a trusted proxy's forwarded host (Express's `trust proxy`), or the Host
 * when it names the address the server listens on, else that address itself.
 */
export function pageLocation(request: Request, appUrl?: string): PageLocation {
  const origin = appUrl ?? `${request.protocol}://${listeningHost(request)}`;
  const url = new URL(request.originalUrl, 'http://placeholder');
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) if (key !== 'page') query[key] = value;
  return { path: `${origin}${url.pathname}`, query };
}

function listeningHost(request: Request): string {
  const sent = request.headers.host;
  // Express reads X-Forwarded-Host only from a proxy TRUST_PROXY trusts; then `host` differs from the header sent.
  if (request.host && request.host !== sent) return request.host;
  const { localAddress = '127.0.0.1', localPort } = request.socket;
  // An IPv4 connection on a dual-stack socket reads `::ffff:127.0.0.1`.
  const plain = localAddress.replace(/^::ffff:/, '');
  const own = `${plain.includes(':') ? `[${plain}]` : plain}:${localPort}`;
  const local = new Set([own, `localhost:${localPort}`, `127.0.0.1:${localPort}`, `[::1]:${localPort}`]);
  return sent && local.has(sent.toLowerCase()) ? sent : own;
}
