import { Module } from '@nestjs/common';
import { WEBHOOK_USER_AGENT } from '@app/crypto';
import { CallsRepository } from '@app/database';
import { ModelProviderModule } from '@app/model-provider';
import { OutboundHttpModule } from '@app/outbound-http';
import { CallAnalysisRunner } from './call-analysis-runner.service';
import { CallRetention } from './call-retention.service';
import { CallWebhooks } from './call-webhooks.service';

/**
 * Calls after they end: their post-call analysis, their signed webhooks, the sweeps of lost jobs, the stale-call reaper
 * and the retention.
 */
@Module({
  imports: [OutboundHttpModule.forRoot(WEBHOOK_USER_AGENT), ModelProviderModule],
  providers: [CallsRepository, CallWebhooks, CallRetention, CallAnalysisRunner],
})
export class CallsModule {}
