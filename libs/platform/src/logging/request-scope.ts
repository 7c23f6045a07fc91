import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { storage, Store } from 'nestjs-pino/storage';
import type { Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The scope of one request: Nest's logger writes through `logger`; every line written in it carries the id. */
export class RequestScope extends Store {
  constructor(
    logger: Logger,
    readonly requestId: string,
  ) {
    super(logger);
  }
}

/**
 * A request's id: its `X-Request-Id` when the caller (or a proxy) sends a sane one, else a fresh UUID. Echoed back
 * and written on every log line of the request.
 */
export function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

/** The id of the request being handled, if any (jobs it enqueues carry it, so their log lines can be joined). */
export function currentRequestId(): string | undefined {
  const scope = storage.getStore();
  return scope instanceof RequestScope ? scope.requestId : undefined;
}
