import { type DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { AppLogger } from './app-logger.service';
import { LOGGED_SERVICE, RequestLogging } from './request-logging.service';
import { ROOT_LOGGER, RootLoggerModule } from './root-logger.module';

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
      providers: [{ provide: LOGGED_SERVICE, useValue: service }, RequestLogging, AppLogger],
      exports: [RequestLogging, AppLogger],
    };
  }
}
