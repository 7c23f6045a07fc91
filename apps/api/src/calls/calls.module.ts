import { Module } from '@nestjs/common';
import { CallsRepository } from '@app/database';
import { CallsController } from './calls.controller';
import { CallsService } from './calls.service';

@Module({
  controllers: [CallsController],
  providers: [CallsService, CallsRepository],
})
export class CallsModule {}
