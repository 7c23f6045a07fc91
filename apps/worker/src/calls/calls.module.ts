import { Module } from '@nestjs/common';
import { CallsRepository } from '@app/database';
import { WEBHOOK_USER_AGENT } from '@app/crypto';
import { OutboundHttpModule } from '@app/outbound-http';
import { CallRetention } from './call-retention.service';
import { CallWebhooks } from './call-webhooks.service';

/** Calls after they end: their signed webhooks, the owed-webhook sweep, the stale-call reaper and the retention. */
@Module({
  imports: [OutboundHttpModule.forRoot(WEBHOOK_USER_AGENT)],
  providers: [CallsRepository, CallWebhooks, CallRetention],
})
export class CallsModule {}
