import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions, type PoolBounds } from './data-source-options';
import { ReadReplicas } from './read-replicas';

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

/** The TypeORM connection; it retries at boot so a process can start before Postgres is ready. */
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
      ],
      exports: [ReadReplicas],
    };
  }
}
