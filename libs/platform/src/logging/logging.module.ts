import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '@app/config';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * JSON logs with a request id on every line of a request. The id comes from `X-Request-Id` when the caller
 * (or a proxy) sends a sane one, and is echoed back. Credentials are redacted.
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
              },
              customProps: () => ({ service }),
              autoLogging: { ignore: (request: IncomingMessage) => request.url?.startsWith('/api/health') ?? false },
            },
          }),
        }),
      ],
    };
  }
}
