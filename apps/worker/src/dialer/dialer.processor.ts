import { Injectable, Module } from '@nestjs/common';
import { CallIngestion, Clock } from '@app/calls';
import { CallsRepository, DiallingRepository, LocalCallControlRepository } from '@app/database';
import { handle, JobProcessor, Jobs, Queues } from '@app/jobs';
import { CALL_CONTROL } from '@app/telephony';
import { callControlProvider } from './call-control.provider';
import { callDialerProvider } from './call-dialer.provider';
import { CallPlacer } from './call-placer.service';
import { DialScheduler } from './dial-scheduler.service';

@Injectable()
export class DialerProcessor extends JobProcessor {
  readonly queueName = Queues.dialer;

  protected readonly handlers = [
    handle(Jobs.dialCampaigns, () => this.scheduler.sweep()),
    handle(Jobs.dialCampaign, (job) => this.scheduler.run(job.data.campaignId)),
    handle(Jobs.placeCall, (job) => this.placer.place(job.data.callId)),
  ];

  constructor(
    private readonly scheduler: DialScheduler,
    private readonly placer: CallPlacer,
  ) {
    super();
  }
}

@Module({
  providers: [
    Clock,
    CallsRepository,
    DiallingRepository,
    CallIngestion,
    callDialerProvider,
    LocalCallControlRepository,
    callControlProvider,
    DialScheduler,
    CallPlacer,
    DialerProcessor,
  ],
  exports: [DialerProcessor, DialScheduler, Clock, CALL_CONTROL],
})
export class DialerModule {}
