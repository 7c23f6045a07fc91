import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { storage } from 'nestjs-pino/storage';
import { AppConfig } from '@app/config';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The id of the request being handled, if any (jobs it enqueues carry it, so their log lines can be joined). */
export function currentRequestId(): string | undefined {
  const logger = storage.getStore()?.logger as { bindings?: () => { req?: { id?: string } } } | undefined;
  return logger?.bindings?.().req?.id;
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
        LoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
            pinoHttp: {
              level: config.logLevel,
              ...(config.logFormat === 'pretty'
                ? {
                    transport: {
                      target: 'pino-pretty',
                      options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
                    },
                  }
                : {}),
              genReqId: (request: IncomingMessage, response: ServerResponse) => {
                const header = request.headers['x-request-id'];
                const id = typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
                response.setHeader('X-Request-Id', id);
                return id;
              },
              redact: {
                paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
                censor: '[redacted]',
              },
              serializers: {
                // Query strings can carry tokens sent by mistake; log the path only.
                req: (request: { id: string; method: string; url: string }) => ({
                  id: request.id,
                  method: request.method,
                  path: request.url.split('?')[0],
                }),
                res: (response: { statusCode: number }) => ({ statusCode: response.statusCode }),
              },
              // Read when the request line is written, after authentication: who made it.
              customProps: (request: IncomingMessage & { auth?: { user: { id: number } } }) => ({
                service,
                ...(request.auth ? { userId: request.auth.user.id } : {}),
              }),
              autoLogging: { ignore: (request: IncomingMessage) => request.url?.startsWith('/api/health') ?? false },
            },
          }),
        }),
      ],
    };
  }
}
