import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig, ConfigModule, redisOptionsFromUrl } from '@app/config';
import { CryptoModule } from '@app/crypto';
import { DatabaseModule } from '@app/database';
import { JobsModule } from '@app/jobs';
import {
  ApiExceptionFilter,
  ApiValidationPipe,
  HealthModule,
  LoggingModule,
  MetricsModule,
  RedisModule,
} from '@app/platform';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AuthModule } from './auth/auth.module';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { RequestInterceptorsModule } from './idempotency/request-interceptors.module';
import { KnowledgebasesModule } from './knowledgebases/knowledgebases.module';
import { LanguagesModule } from './languages/languages.module';
import { RateLimitGuard } from './rate-limit.guard';
import { ToolsModule } from './tools/tools.module';
import { FailOpenRedisThrottlerStorage } from './rate-limit.storage';

/** The HTTP API. It produces jobs and never consumes them. */
@Module({})
export class ApiModule {
  static forRoot(config: AppConfig, extraModules: DynamicModule['imports'] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot('api'),
        DatabaseModule,
        RedisModule,
        JobsModule.forRoot(),
        CryptoModule,
        ThrottlerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (appConfig: AppConfig) => ({
            throttlers: [{ name: 'default', ttl: 60_000, limit: appConfig.rateLimitPerMinute }],
            // Given options (not a client), the storage owns its connection and closes it on shutdown.
            // It fails fast while Redis is away, so requests are not held up by the rate limiter.
            storage: new FailOpenRedisThrottlerStorage({
              ...redisOptionsFromUrl(appConfig.redisUrl),
              keyPrefix: `${appConfig.queuePrefix}:rate:`,
              enableOfflineQueue: false,
              maxRetriesPerRequest: 1,
            }),
          }),
        }),
        HealthModule.forRoot(),
        MetricsModule,
        RequestInterceptorsModule,
        AuthModule,
        ApiKeysModule,
        LanguagesModule,
        KnowledgebasesModule,
        ToolsModule,
        ...extraModules,
      ],
      providers: [
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        // Order matters: rate limiting runs before the token lookup.
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_GUARD, useClass: BearerAuthGuard },
      ],
    };
  }
}
