import { createServer, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';
import type { HttpTimeouts } from '@app/config';
import { answerClientError } from './client-error';

const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

/**
 * Nest's Express adapter with what it leaves to the application:
 * - the Node server's timeouts (a slow client cannot hold a connection and its memory for long; Node's checks run
 *   every second instead of every 30), and requests Node refuses before the app sees them answered in the spec's
 *   shape;
 * - once the app closes, every answer still to be sent ends its connection (`Connection: close`), so a keep-alive
 *   client does not send its next request to a server that is going away;
 * - a handler's object answered as JSON without Express's `res.json`, which re-parses the media type it has just
 *   set to add a charset and weighs settings this service never sets: the same bytes and headers, for less work.
 */
export class ManagedExpressAdapter extends ExpressAdapter {
  private closing = false;

  constructor(private readonly timeouts: HttpTimeouts) {
    super();
    // Every response of the app inherits from `app.response`, so this sees each one as its head is written, in flight
    // when the close began or not, without a listener per request.
    const responses = this.getInstance().response as ServerResponse;
    const writeHead = responses.writeHead;
    const closing = () => this.closing;
    responses.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      if (closing()) this.setHeader('Connection', 'close');
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];
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

  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (
      typeof body !== 'object' ||
      body === null ||
      body instanceof StreamableFile ||
      body instanceof Error ||
      response.getHeader('Content-Type') !== undefined
    )
      return super.reply(response, body, statusCode);
    const text = JSON.stringify(body);
    const headers: OutgoingHttpHeaders = {
      'Content-Type': JSON_MEDIA_TYPE,
      'Content-Length': Buffer.byteLength(text),
    };
    response.writeHead(statusCode ?? response.statusCode, headers);
    return response.end(response.req.method === 'HEAD' ? undefined : text);
  }

  override close(): Promise<unknown> | undefined {
    this.closing = true;
    return super.close();
  }
}
