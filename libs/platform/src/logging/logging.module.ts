import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { Logger as NestPinoLogger, LoggerModule } from 'nestjs-pino';
import { storage, Store } from 'nestjs-pino/storage';
import pino, { type Logger } from 'pino';
import { AppConfig } from '@app/config';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** What probes and scrapers call every few seconds (health, a worker's metrics): a line each would drown the rest. */
const PROBED = /^\/api\/(health|metrics)(?:[/?]|$)/i;
const ROOT_LOGGER = Symbol('root logger');
const SERVICE = Symbol('service');

type LoggedRequest = IncomingMessage & { auth?: { user: { id: number } } };

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
 * A request's id: its `X-Request-Id` when the caller (or a proxy) sends a sane one, else a fresh UUID. Echoed back
 * and written on every log line of the request.
 */
function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

/** The id of the request being handled, if any (jobs it enqueues carry it, so their log lines can be joined). */
export function currentRequestId(): string | undefined {
  const scope = storage.getStore();
  return scope instanceof RequestScope ? scope.requestId : undefined;
}

/** Whether pino-pretty is installed: an optional dependency, left out of production installs. */
function prettyAvailable(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

function rootLogger(config: AppConfig): Logger {
  const pretty = config.logFormat === 'pretty' && prettyAvailable();
  const logger = pino({
    level: config.logLevel,
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' } } }
      : {}),
    // Lines written while a request is handled name it; a request line's own `req` wins over this one.
    mixin: () => {
      const scope = storage.getStore();
      return scope instanceof RequestScope ? { req: { id: scope.requestId } } : {};
    },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  });
  if (config.logFormat === 'pretty' && !pretty)
    logger.warn('LOG_FORMAT=pretty, but pino-pretty is not installed (a production install): writing JSON lines');
  return logger;
}

/** Nest's start-up narration: a line per module, controller and route, 100+ lines that say nothing went wrong. */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/**
 * Nest's logger over pino, with Nest's start-up narration at debug: a boot prints a handful of lines (what it
 * listens on, what it consumes, anything that went wrong), and `LOG_LEVEL=debug` brings the rest back.
 */
@Injectable()
export class AppLogger extends NestPinoLogger {
  override log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (typeof context === 'string' && BOOT_CONTEXTS.has(context)) return super.debug(message, ...rest);
    super.log(message, ...rest);
  }
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
      providers: [{ provide: SERVICE, useValue: service }, RequestLogging, AppLogger],
      exports: [RequestLogging, AppLogger],
    };
  }
}
