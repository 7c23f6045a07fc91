import { Injectable, Module } from '@nestjs/common';
import { CallsRepository } from '@app/database';
import { handle, JobProcessor, Jobs, Queues } from '@app/jobs';
import { OutboundHttpModule } from '@app/outbound-http';
import { CallWebhooks } from './call-webhooks.service';

/** How webhook deliveries introduce themselves to the receiver. */
export const WEBHOOK_USER_AGENT = 'VoiceAssistantWebhooks/1.0';

@Injectable()
export class CallsProcessor extends JobProcessor {
  readonly queueName = Queues.calls;

  protected readonly handlers = [
    handle(Jobs.deliverCallWebhook, (job) => this.webhooks.deliver(job)),
    handle(Jobs.deliverCallStartedWebhook, (job) => this.webhooks.deliverStarted(job)),
  ];

  constructor(private readonly webhooks: CallWebhooks) {
    super();
  }
}

@Module({
  imports: [OutboundHttpModule.forRoot(WEBHOOK_USER_AGENT)],
  providers: [CallsRepository, CallWebhooks, CallsProcessor],
  exports: [CallsProcessor, CallWebhooks, CallsRepository],
})
export class CallsModule {}
