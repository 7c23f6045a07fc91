import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions } from './data-source-options';

/** The TypeORM connection; it retries at boot so a process can start before Postgres is ready. */
@Module({
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
})
export class DatabaseModule {}
