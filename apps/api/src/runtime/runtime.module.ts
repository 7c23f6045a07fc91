import { Module } from '@nestjs/common';
import { CallIngestion } from '@app/calls';
import { WEBHOOK_USER_AGENT } from '@app/crypto';
import { OutboundHttpModule } from '@app/outbound-http';
import { CallsModule } from '../calls/calls.module';
import { KnowledgebasesModule } from '../knowledgebases/knowledgebases.module';
import { ToolsModule } from '../tools/tools.module';
import { AssistantRequests } from './assistant-requests.service';
import { CallRuntime } from './call-runtime.service';
import { CallSessions } from './call-sessions.service';
import { CallTransfers } from './call-transfers.service';
import { RuntimeController } from './runtime.controller';
import { RuntimeTokenGuard } from './runtime-token.guard';

/**
 * The voice runtime's API under /api/internal: sessions, knowledge, tools, events, transfers (through the telephony
 * provider's call control the calls module provides, as the worker's) and the call's writes.
 */
@Module({
  // The ring-time hook's requests introduce themselves as the call webhooks do.
  imports: [CallsModule, KnowledgebasesModule, ToolsModule, OutboundHttpModule.forRoot(WEBHOOK_USER_AGENT)],
  controllers: [RuntimeController],
  providers: [CallSessions, CallRuntime, CallTransfers, CallIngestion, RuntimeTokenGuard, AssistantRequests],
})
export class RuntimeModule {}
