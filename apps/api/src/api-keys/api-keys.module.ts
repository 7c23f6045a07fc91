import { Module } from '@nestjs/common';
import { ApiKey, tenantRepositoryProvider } from '@app/database';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';

@Module({
  controllers: [ApiKeysController],
  providers: [ApiKeysService, tenantRepositoryProvider(ApiKey)],
})
export class ApiKeysModule {}
