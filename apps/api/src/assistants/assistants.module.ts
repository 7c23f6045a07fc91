import { Module } from '@nestjs/common';
import { Assistant, tenantRepositoryProvider } from '@app/database';
import { AssistantsController } from './assistants.controller';
import { FoldersController } from './folders.controller';
import { LabelsController } from './labels.controller';
import { AssistantsService } from './assistants.service';
import { FoldersService } from './folders.service';
import { LabelsService } from './labels.service';

@Module({
  controllers: [AssistantsController, FoldersController, LabelsController],
  providers: [AssistantsService, FoldersService, LabelsService, tenantRepositoryProvider(Assistant)],
})
export class AssistantsModule {}
