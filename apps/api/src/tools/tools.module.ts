import { Module } from '@nestjs/common';
import { Tool, tenantRepositoryProvider } from '@app/database';
import { OutboundHttp, OutboundHttpModule } from '@app/outbound-http';
import { TOOL_USER_AGENT, ToolExecutor } from '@app/tools';
import { ToolsController } from './tools.controller';
import { ToolsService } from './tools.service';

@Module({
  imports: [OutboundHttpModule.forRoot(TOOL_USER_AGENT)],
  controllers: [ToolsController],
  providers: [
    ToolsService,
    tenantRepositoryProvider(Tool),
    // The executor is plain (the call runtime reuses it); here it runs on the API's guarded client.
    {
      provide: ToolExecutor,
      inject: [OutboundHttp],
      useFactory: (http: OutboundHttp) => new ToolExecutor(http.client),
    },
  ],
  exports: [ToolsService],
})
export class ToolsModule {}
