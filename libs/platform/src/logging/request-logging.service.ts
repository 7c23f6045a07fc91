import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { storage } from 'nestjs-pino/storage';
import type { Logger } from 'pino';
import { RequestScope, requestIdOf } from './request-scope';
import { ROOT_LOGGER } from './root-logger.module';

/** What probes and scrapers call every few seconds (health, a worker's metrics): a line each would drown the rest. */
const PROBED = /^\/api\/(health|metrics)(?:[/?]|$)/i;
/** The app a request line names (`api`, `worker`). */
export const LOGGED_SERVICE = Symbol('service');

type LoggedRequest = IncomingMessage & { auth?: { user: { id: number } } };

/**
 * One line per request, written when the response ends: id, method and path (never the query string, which can
 * carry tokens sent by mistake, nor any header), status, time, and the account once authenticated. The lines a
 * request's own code writes carry its id through the request scope. Built without a child logger per request,
 * and nothing is assembled for the request line when the level would not write it.
 */
@Injectable()
export class RequestLogging {
  constructor(
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    @Inject(LOGGED_SERVICE) private readonly service: string,
  ) {}

  /** The app's first middleware: the id, the request line once the response ends, and the request's scope. */
  middleware() {
    return (request: LoggedRequest, response: ServerResponse, next: () => void): void => {
      const id = requestIdOf(request);
      response.setHeader('X-Request-Id', id);
      if (this.logger.isLevelEnabled('info') && !PROBED.test(request.url!)) this.lineWhenDone(id, request, response);
      // Guards, pipes, handlers and interceptors all run inside the scope; the body parser's callback keeps it
      // (raw-body binds it to the scope it was called in).
      storage.run(new RequestScope(this.logger, id), next);
    };
  }

  private lineWhenDone(id: string, request: LoggedRequest, response: ServerResponse): void {
    const started = performance.now();
    // Read now: Express rewrites `url` while routing.
    const path = request.url!.split('?')[0];
    response.once('close', () => {
      const line = {
        req: { id, method: request.method, path },
        service: this.service,
        ...(request.auth ? { userId: request.auth.user.id } : {}),
        res: { statusCode: response.statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      if (!response.writableFinished) this.logger.info(line, 'request aborted');
      else if (response.statusCode >= 500) this.logger.error(line, 'request errored');
      else this.logger.info(line, 'request completed');
    });
  }
}
