import { Module } from '@nestjs/common';
import { CallIngestion } from '@app/calls';
import { KnowledgebasesModule } from '../knowledgebases/knowledgebases.module';
import { ToolsModule } from '../tools/tools.module';
import { CallRuntime } from './call-runtime.service';
import { CallSessions } from './call-sessions.service';
import { RuntimeController } from './runtime.controller';
import { RuntimeTokenGuard } from './runtime-token.guard';

/** The voice runtime's API under /api/internal: sessions, knowledge, tools, events and the call's writes. */
@Module({
  imports: [KnowledgebasesModule, ToolsModule],
  controllers: [RuntimeController],
  providers: [CallSessions, CallRuntime, CallIngestion, RuntimeTokenGuard],
})
export class RuntimeModule {}
