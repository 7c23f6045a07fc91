import { Injectable, Module } from '@nestjs/common';
import { Job } from 'bullmq';
import { CallIngestion, Clock } from '@app/calls';
import { CallJob, CampaignJob, JobHandler, JobProcessor, Jobs, Queues } from '@app/jobs';
import { callDialerProvider } from './call-dialer.provider';
import { CallPlacer } from './call-placer.service';
import { DialScheduler } from './dial-scheduler.service';

@Injectable()
export class DialerProcessor extends JobProcessor {
  readonly queueName = Queues.dialer;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.dialCampaigns.name]: () => this.scheduler.sweep(),
    [Jobs.dialCampaign.name]: (job) => this.scheduler.run((job as Job<CampaignJob>).data.campaignId),
    [Jobs.placeCall.name]: (job) => this.placer.place((job as Job<CallJob>).data.callId),
  };

  constructor(
    private readonly scheduler: DialScheduler,
    private readonly placer: CallPlacer,
  ) {
    super();
  }
}

@Module({
  providers: [Clock, CallIngestion, callDialerProvider, DialScheduler, CallPlacer, DialerProcessor],
  exports: [DialerProcessor, DialScheduler, Clock],
})
export class DialerModule {}
