import { Module } from '@nestjs/common';
import { CallsRepository, DiallingRepository } from '@app/database';
import { CallsController } from './calls.controller';
import { CallsService } from './calls.service';

@Module({
  controllers: [CallsController],
  providers: [CallsService, CallsRepository, DiallingRepository],
})
export class CallsModule {}
