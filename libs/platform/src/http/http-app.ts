import { parse as parseQuery } from 'node:querystring';
import { ConsoleLogger, DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Logger } from 'nestjs-pino';
import { Errors } from '@app/contracts';
import { RequestLogging, requestIdOf } from '../logging/logging.module';
import { AllowedMethods } from './allowed-methods';
import { answerClientError } from './client-error';
import { BODY_LIMIT_BYTES, registerBodyParsers } from './request-body';

/**
 * How a path finds its route, as Express found it: any letter case, a trailing slash allowed, and no path segment
 * refused for its length (no URL is longer than Node's 16 KiB of headers anyway).
 */
const PATH_MATCHING = { ignoreTrailingSlash: true, caseSensitive: false, maxParamLength: 16 * 1024 };

/**
 * A Nest application on Fastify with the house's HTTP conventions, shared by the API and the worker: JSON logs
 * with a request line and id, the body parsers and their limits, answers in the spec's shapes for what Fastify
 * refuses before routing, paths matched as Express matched them (any letter case, a trailing slash allowed), the
 * global prefix `api` and graceful shutdown.
 */
export async function createHttpApp(
  module: DynamicModule | Type,
  options: { trustProxy?: string } = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: options.trustProxy,
    genReqId: requestIdOf,
    routerOptions: {
      ...PATH_MATCHING,
      // Node's own parser, as Express's: plain records (no prototype) that validation walks like a body.
      querystringParser: (query: string) => parseQuery(query),
    },
    // Requests in flight finish during shutdown and readiness says 503 meanwhile (see the health module); Fastify's
    // own 503 would answer in its shape, not the spec's.
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    // A URL whose percent-encoding is broken, refused before any hook or the exception filter runs.
    frameworkErrors: (_error: unknown, _request: unknown, reply: FastifyReply) => {
      const error = Errors.malformedRequest();
      void reply.status(error.status).send(error.body);
    },
    // Nest middleware would need @fastify/middie on every request; the house's cross-cutting work is in hooks.
    skipMiddie: true,
  });
  const fastify = adapter.getInstance();
  AllowedMethods.track(fastify, PATH_MATCHING);
  registerBodyParsers(fastify);
  closeConnectionsWhenDone(fastify);
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    // The parsers are the ones above, with the house's limits; Nest's defaults would be added on top of them.
    bodyParser: false,
    bufferLogs: true,
    // Until the JSON logger takes over (and if boot fails before it does), Nest's own lines are JSON too.
    logger: new ConsoleLogger({ json: true, colors: false }),
  });
  app.useLogger(app.get(Logger));
  app.get(RequestLogging).install(fastify);
  app.setGlobalPrefix('api');
  app.enableShutdownHooks();
  return app;
}

/**
 * While the app closes, each response in flight ends its connection (`Connection: close`), so a keep-alive client
 * does not hold the server open until its idle timeout; idle connections are closed by the server's own close.
 */
function closeConnectionsWhenDone(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
}
