import { Module } from '@nestjs/common';
import { callControlProvider } from '@app/calls';
import { CALL_CONTROL } from '@app/telephony';
import { CallsController } from './calls.controller';
import { CallEventStreams } from './call-event-streams.service';
import { CallsService } from './calls.service';
import { LiveCallsService } from './live-calls.service';
import { WebCallsController } from './web-calls.controller';
import { WebCallsService } from './web-calls.service';

@Module({
  controllers: [CallsController, WebCallsController],
  // The one call control of the API process: web calls' rooms here, transfers in the runtime's module.
  providers: [CallsService, LiveCallsService, CallEventStreams, WebCallsService, callControlProvider],
  exports: [CallEventStreams, CALL_CONTROL],
})
export class CallsModule {}
