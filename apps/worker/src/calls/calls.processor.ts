import { Injectable, Module } from '@nestjs/common';
import { Job } from 'bullmq';
import { CallJob, JobHandler, JobProcessor, Jobs, Queues } from '@app/jobs';
import { OutboundHttpModule } from '@app/outbound-http';
import { CallWebhooks } from './call-webhooks.service';

/** How webhook deliveries introduce themselves to the receiver. */
export const WEBHOOK_USER_AGENT = 'VoiceAssistantWebhooks/1.0';

@Injectable()
export class CallsProcessor extends JobProcessor {
  readonly queueName = Queues.calls;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.deliverCallWebhook.name]: (job) => this.webhooks.deliver(job as Job<CallJob>),
    [Jobs.deliverCallStartedWebhook.name]: (job) => this.webhooks.deliverStarted(job as Job<CallJob>),
  };

  constructor(private readonly webhooks: CallWebhooks) {
    super();
  }
}

@Module({
  imports: [OutboundHttpModule.forRoot(WEBHOOK_USER_AGENT)],
  providers: [CallWebhooks, CallsProcessor],
  exports: [CallsProcessor, CallWebhooks],
})
export class CallsModule {}
