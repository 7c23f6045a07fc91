import { Module } from '@nestjs/common';
import { Assistant, tenantRepositoryProvider } from '@app/database';
import { AssistantsController, FoldersController, LabelsController } from './assistants.controllers';
import { AssistantsService } from './assistants.service';
import { FoldersService, LabelsService } from './organisation.services';

@Module({
  controllers: [AssistantsController, FoldersController, LabelsController],
  providers: [AssistantsService, FoldersService, LabelsService, tenantRepositoryProvider(Assistant)],
})
export class AssistantsModule {}
