import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { AssistantLinksRepository } from './assistant-links.repository';
import { CallAnalysesRepository } from './call-analyses.repository';
import { AssistantRequestsRepository } from './assistant-requests.repository';
import { CallDeliveriesRepository } from './call-deliveries.repository';
import { CallWritesRepository } from './call-writes.repository';
import { CallsRepository } from './calls.repository';
import { CampaignsRepository } from './campaigns.repository';
import { CredentialsRepository } from './credentials.repository';
import { dataSourceOptions, type PoolBounds } from './data-source-options';
import { DiallingRepository } from './dialling.repository';
import { DocumentsRepository } from './documents.repository';
import { ExpiringTokensRepository } from './expiring-tokens.repository';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { KnowledgebaseSummaries } from './knowledgebase-summaries';
import { LanguagesRepository } from './languages.repository';
import { LeadImportsRepository } from './lead-imports.repository';
import { LeadsRepository } from './leads.repository';
import { LiveCallsRepository } from './live-calls.repository';
import { LocalCallControlRepository } from './local-call-control.repository';
import { ModelUsageRepository } from './model-usage.repository';
import { FoldersRepository } from './folders.repository';
import { LabelsRepository } from './labels.repository';
import { PassageSearch } from './passage-search';
import { PhoneNumbersRepository } from './phone-numbers.repository';
import { RateWindowsRepository } from './rate-windows.repository';
import { PassageEmbeddingsRepository } from './passage-embeddings.repository';
import { ReadReplicas } from './read-replicas';
import { RuntimeCallsRepository } from './runtime-calls.repository';
import { SipTrunksRepository } from './sip-trunks.repository';
import { Transactions } from './transactions';
import { UsageRepository } from './usage.repository';
import { UserSettingsRepository } from './user-settings.repository';
import { UsersRepository } from './users.repository';

export interface DatabaseModuleOptions {
  /** Send account reads of read-only requests to DATABASE_REPLICA_URLS (the API); without it all goes to the primary. */
  readReplicas?: boolean;
  /**
   * Bound every statement by DATABASE_STATEMENT_TIMEOUT_MS (the API, whose statements serve a waiting request). The
   * worker's are not bounded: imports, re-indexing and the retention purge legitimately run long, and a job that
   * waits out a hung server loses nothing (its lock lives in the queue backend). Both bound getting a connection.
   */
  boundedStatements?: boolean;
}

function poolBounds(config: AppConfig, options: DatabaseModuleOptions): PoolBounds {
  const timeouts = config.dependencyTimeouts;
  return {
    connectMs: timeouts.databaseConnectMs,
    statementMs: options.boundedStatements ? timeouts.databaseStatementMs : undefined,
  };
}

/** Every repository of SQL (one per aggregate), for any module of either app to inject. */
const REPOSITORIES = [
  AssistantLinksRepository,
  CallAnalysesRepository,
  AssistantRequestsRepository,
  CallDeliveriesRepository,
  CallWritesRepository,
  CallsRepository,
  CampaignsRepository,
  CredentialsRepository,
  DiallingRepository,
  DocumentsRepository,
  ExpiringTokensRepository,
  FoldersRepository,
  IdempotencyKeysRepository,
  KnowledgebaseSummaries,
  LabelsRepository,
  LanguagesRepository,
  LeadImportsRepository,
  LeadsRepository,
  LiveCallsRepository,
  LocalCallControlRepository,
  ModelUsageRepository,
  PassageEmbeddingsRepository,
  PassageSearch,
  PhoneNumbersRepository,
  RateWindowsRepository,
  RuntimeCallsRepository,
  SipTrunksRepository,
  UsageRepository,
  UserSettingsRepository,
  UsersRepository,
];

/**
 * The TypeORM connection (it retries at boot so a process can start before Postgres is ready), the read replicas,
 * `Transactions` and the SQL repositories, for every module. `TenantRepository`s are registered by the modules that
 * use them (`tenantRepositoryProvider`).
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions = {}): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(config.databaseUrl, undefined, poolBounds(config, options)),
            retryAttempts: 20,
            retryDelay: 1500,
          }),
        }),
      ],
      providers: [
        {
          provide: ReadReplicas,
          inject: [DataSource, AppConfig],
          useFactory: (dataSource: DataSource, config: AppConfig) =>
            new ReadReplicas(
              dataSource,
              options.readReplicas ? config.databaseReplicaUrls : [],
              config.databaseReplicaMaxLagSeconds * 1000,
              poolBounds(config, options),
            ),
        },
        Transactions,
        ...REPOSITORIES,
      ],
      exports: [ReadReplicas, Transactions, ...REPOSITORIES],
    };
  }
}
