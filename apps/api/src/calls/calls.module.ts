import { Module } from '@nestjs/common';
import { CallIngestion } from '@app/calls';
import { CallsController, InternalCallsController } from './calls.controllers';
import { CallsService } from './calls.service';
import { RuntimeTokenGuard } from './runtime-token.guard';

@Module({
  controllers: [CallsController, InternalCallsController],
  providers: [CallsService, CallIngestion, RuntimeTokenGuard],
})
export class CallsModule {}
