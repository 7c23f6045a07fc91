import { Module } from '@nestjs/common';
import { CallIngestion, Clock } from '@app/calls';
import { CallsRepository, DiallingRepository } from '@app/database';
import { callDialerProvider } from './call-dialer.provider';
import { CallPlacer } from './call-placer.service';
import { DialScheduler } from './dial-scheduler.service';

/** Campaign dialling: the scheduler that claims due leads, and the placer that dials them. */
@Module({
  providers: [Clock, CallsRepository, DiallingRepository, CallIngestion, callDialerProvider, DialScheduler, CallPlacer],
})
export class DialerModule {}
