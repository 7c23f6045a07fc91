import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AppConfig, ConfigModule } from '@app/config';
import { CryptoModule } from '@app/crypto';
import { DatabaseModule, ReadReplicas } from '@app/database';
import { JobQueue, JobsModule, queueBackendReadiness } from '@app/jobs';
import { ModelProviderModule } from '@app/model-provider';
import {
  HttpErrorFilter,
  ApiValidationPipe,
  HealthModule,
  LoggingModule,
  MetricsModule,
  READINESS_CHECKS,
  RedisModule,
  WindowCountersModule,
} from '@app/platform';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AssistantsModule } from './assistants/assistants.module';
import { AuthModule } from './auth/auth.module';
import { CallsModule } from './calls/calls.module';
import { CampaignsModule } from './campaigns/campaigns.module';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { RateLimiter } from './rate-limit/rate-limiter.service';
import { ReadYourWritesInterceptor } from './http/read-your-writes.interceptor';
import { RequestInterceptorsModule } from './idempotency/request-interceptors.module';
import { KnowledgebasesModule } from './knowledgebases/knowledgebases.module';
import { LanguagesModule } from './languages/languages.module';
import { RuntimeModule } from './runtime/runtime.module';
import { SettingsModule } from './settings/settings.module';
import { TelephonyModule } from './telephony/telephony.module';
import { ToolsModule } from './tools/tools.module';
import { UsageModule } from './usage/usage.module';

/** The HTTP API. It produces jobs and never consumes them. */
@Module({})
export class ApiModule {
  static forRoot(config: AppConfig, extraModules: DynamicModule['imports'] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot('api'),
        DatabaseModule.forRoot({ readReplicas: true, boundedStatements: true }),
        RedisModule,
        WindowCountersModule,
        JobsModule.forRoot(),
        CryptoModule,
        ModelProviderModule,
        HealthModule.forRoot([
          {
            provide: READINESS_CHECKS,
            inject: [JobQueue, ReadReplicas],
            useFactory: (jobs: JobQueue, replicas: ReadReplicas) => ({
              ...queueBackendReadiness(jobs),
              ...replicas.readinessChecks(),
            }),
          },
        ]),
        MetricsModule.forRoot('own-port'),
        RequestInterceptorsModule,
        // In the order the OpenAPI document lists their routes: what an assistant links to (a knowledgebase, tools, a
        // number) before the assistant, so each create's example names ids the ones above it made on a fresh install.
        AuthModule,
        ApiKeysModule,
        LanguagesModule,
        SettingsModule,
        KnowledgebasesModule,
        ToolsModule,
        TelephonyModule,
        AssistantsModule,
        CampaignsModule,
        CallsModule,
        UsageModule,
        RuntimeModule,
        ...extraModules,
      ],
      providers: [
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        RateLimiter,
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        // Only with replicas to route reads to: a global interceptor runs Nest's RxJS chain on every request, GETs
        // included, which no other interceptor does (docs/benchmarks.md, section 8).
        ...(config.databaseReplicaUrls.length > 0
          ? [{ provide: APP_INTERCEPTOR, useClass: ReadYourWritesInterceptor }]
          : []),
      ],
    };
  }
}
