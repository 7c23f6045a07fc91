import { type DynamicModule, Module } from '@nestjs/common';
import { storage } from 'nestjs-pino/storage';
import pino, { type Logger } from 'pino';
import { AppConfig } from '@app/config';
import { RequestScope } from './request-scope';

export const ROOT_LOGGER = Symbol('root logger');

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

/** The one root logger of a process, shared by Nest's logger and the request lines. */
@Module({})
export class RootLoggerModule {
  static forRoot(): DynamicModule {
    return {
      module: RootLoggerModule,
      providers: [{ provide: ROOT_LOGGER, inject: [AppConfig], useFactory: rootLogger }],
      exports: [ROOT_LOGGER],
    };
  }
}
