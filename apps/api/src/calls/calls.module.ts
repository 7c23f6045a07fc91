import { Module } from '@nestjs/common';
import { CallsController } from './calls.controller';
import { CallEventStreams } from './call-event-streams.service';
import { CallsService } from './calls.service';
import { LiveCallsService } from './live-calls.service';

@Module({
  controllers: [CallsController],
  providers: [CallsService, LiveCallsService, CallEventStreams],
  exports: [CallEventStreams],
})
export class CallsModule {}
