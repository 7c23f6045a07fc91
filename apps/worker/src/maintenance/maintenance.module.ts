import { Module } from '@nestjs/common';
import { ExpiringTokensRepository, IdempotencyKeysRepository } from '@app/database';
import { MaintenancePurges } from './maintenance-purges.service';

/** What belongs to no feature of the worker: the purges of expired tokens and Idempotency-Key records. */
@Module({
  providers: [ExpiringTokensRepository, IdempotencyKeysRepository, MaintenancePurges],
})
export class MaintenanceModule {}
