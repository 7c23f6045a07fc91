import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { HttpTimeouts } from '@app/config';
import { answerClientError } from './client-error';

/**
 * Nest's Express adapter with two things it leaves to the application: the Node server's timeouts (a slow
 * client cannot hold a connection and its memory for long; Node's checks run every second instead of every 30)
 * and requests it refuses before the app sees them answered in the spec's shape; and, once the app closes, every
 * answer still to be sent ends its connection (`Connection: close`), so a keep-alive client does not send its
 * next request to a server that is going away.
 */
export class ManagedExpressAdapter extends ExpressAdapter {
  private readonly inFlight = new Set<ServerResponse>();
  private closing = false;

  constructor(private readonly timeouts: HttpTimeouts) {
    super();
    this.getInstance().use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
      if (this.closing) {
        response.setHeader('Connection', 'close');
      } else {
        this.inFlight.add(response);
        response.once('close', () => this.inFlight.delete(response));
      }
      next();
    });
  }

  // TLS is terminated in front of the service, so Nest's `httpsOptions` are never given.
  override initHttpServer(): void {
    const server: Server = createServer(
      {
        keepAliveTimeout: this.timeouts.keepAliveMs,
        headersTimeout: this.timeouts.headersMs,
        requestTimeout: this.timeouts.requestMs,
        connectionsCheckingInterval: 1_000,
      },
      this.getInstance(),
    );
    server.on('clientError', answerClientError);
    this.setHttpServer(server);
  }

  override close(): Promise<unknown> | undefined {
    this.closing = true;
    for (const response of this.inFlight) if (!response.headersSent) response.setHeader('Connection', 'close');
    this.inFlight.clear();
    return super.close();
  }
}
