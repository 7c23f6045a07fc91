import { Module } from '@nestjs/common';
import { Tool, tenantRepositoryProvider } from '@app/database';
import { ApiToolExecutor } from './tool-executor.provider';
import { ToolsController } from './tools.controller';
import { ToolsService } from './tools.service';

@Module({
  controllers: [ToolsController],
  providers: [ToolsService, ApiToolExecutor, tenantRepositoryProvider(Tool)],
})
export class ToolsModule {}
