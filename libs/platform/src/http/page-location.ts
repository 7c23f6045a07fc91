import type { Request } from 'express';
import type { PageLocation } from '@app/contracts';

/**
 * Absolute path and carried-over query of a list request, for the envelope's links. Uses APP_URL when set
 * (behind a proxy the request's own host may be internal), else the request's protocol and host.
 */
export function pageLocation(request: Request, appUrl?: string): PageLocation {
  const origin = appUrl ?? `${request.protocol}://${request.get('host')}`;
  const url = new URL(request.originalUrl, 'http://placeholder');
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) if (key !== 'page') query[key] = value;
  return { path: `${origin}${url.pathname}`, query };
}
