import { Module } from '@nestjs/common';
import { CallIngestion, callControlProvider, Clock } from '@app/calls';
import { CALL_CONTROL } from '@app/telephony';
import { callDialerProvider } from './call-dialer.provider';
import { CallPlacer } from './call-placer.service';
import { DialScheduler } from './dial-scheduler.service';
import { OwnerHangups } from './owner-hangups.service';

/**
 * Campaign dialling: the scheduler that claims due leads, and the placer that dials them; call control beside it, with
 * the owner's hang-ups it enforces.
 */
@Module({
  providers: [Clock, CallIngestion, callDialerProvider, callControlProvider, DialScheduler, CallPlacer, OwnerHangups],
  exports: [CALL_CONTROL],
})
export class DialerModule {}
