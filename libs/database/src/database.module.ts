import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions } from './data-source-options';
import { ReadReplicas } from './read-replicas';

export interface DatabaseModuleOptions {
  /** Send account reads of read-only requests to DATABASE_REPLICA_URLS (the API); without it all goes to the primary. */
  readReplicas?: boolean;
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
            ...dataSourceOptions(config.databaseUrl),
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
            ),
        },
      ],
      exports: [ReadReplicas],
    };
  }
}
