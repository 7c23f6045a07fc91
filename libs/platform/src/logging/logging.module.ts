import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LoggerModule } from 'nestjs-pino';
import { storage, Store } from 'nestjs-pino/storage';
import pino, { type Logger } from 'pino';
import { AppConfig } from '@app/config';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const ROOT_LOGGER = Symbol('root logger');
const SERVICE = Symbol('service');

/** The scope of one request: Nest's logger writes through `logger`; every line written in it carries the id. */
class RequestScope extends Store {
  constructor(
    logger: Logger,
    readonly requestId: string,
  ) {
    super(logger);
  }
}

/**
 * A request's id (Fastify's `genReqId`): its `X-Request-Id` when the caller (or a proxy) sends a sane one, else a
 * fresh UUID. Echoed back and written on every log line of the request.
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

function rootLogger(config: AppConfig): Logger {
  return pino({
    level: config.logLevel,
    ...(config.logFormat === 'pretty'
      ? { transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' } } }
      : {}),
    // Lines written while a request is handled name it; a request line's own `req` wins over this one.
    mixin: () => {
      const scope = storage.getStore();
      return scope instanceof RequestScope ? { req: { id: scope.requestId } } : {};
    },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  });
}

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
    @Inject(SERVICE) private readonly service: string,
  ) {}

  install(app: FastifyInstance): void {
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('X-Request-Id', request.id);
      if (this.logger.isLevelEnabled('info') && !request.url.startsWith('/api/health'))
        this.lineWhenDone(request, reply);
      done();
    });
    // The scope is entered once the body is read: what runs after the body's stream events would not see a scope
    // entered earlier. Guards, pipes, handlers and interceptors all run inside it.
    app.addHook('preHandler', (request, _reply, done) => {
      storage.run(new RequestScope(this.logger, request.id), done);
    });
  }

  private lineWhenDone(request: FastifyRequest & { auth?: { user: { id: number } } }, reply: FastifyReply): void {
    const response = reply.raw;
    response.once('close', () => {
      const line = {
        req: { id: request.id, method: request.method, path: request.url.split('?')[0] },
        service: this.service,
        ...(request.auth ? { userId: request.auth.user.id } : {}),
        res: { statusCode: response.statusCode },
        responseTime: Math.round(reply.elapsedTime),
      };
      if (!response.writableFinished) this.logger.info(line, 'request aborted');
      else if (response.statusCode >= 500) this.logger.error(line, 'request errored');
      else this.logger.info(line, 'request completed');
    });
  }
}

/** The one root logger of a process, shared by Nest's logger and the request lines. */
@Module({})
class RootLoggerModule {
  static forRoot(): DynamicModule {
    return {
      module: RootLoggerModule,
      providers: [{ provide: ROOT_LOGGER, inject: [AppConfig], useFactory: rootLogger }],
      exports: [ROOT_LOGGER],
    };
  }
}

/**
 * JSON logs with a request id on every line of a request, and the account on request lines. The id comes from
 * `X-Request-Id` when the caller (or a proxy) sends a sane one, and is echoed back. Credentials are redacted;
 * request lines carry no headers of the response. `LOG_FORMAT=pretty` prints readable lines for development.
 */
@Module({})
export class LoggingModule {
  static forRoot(service: 'api' | 'worker'): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        RootLoggerModule.forRoot(),
        // Nest's own logger writes through the same root logger; the request middleware is the one below.
        LoggerModule.forRootAsync({
          imports: [RootLoggerModule.forRoot()],
          inject: [ROOT_LOGGER],
          useFactory: (logger: Logger) => ({ pinoHttp: { logger }, useExisting: true, forRoutes: [] }),
        }),
      ],
      providers: [{ provide: SERVICE, useValue: service }, RequestLogging],
      exports: [RequestLogging],
    };
  }
}
