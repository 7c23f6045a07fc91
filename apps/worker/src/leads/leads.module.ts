import { Module } from '@nestjs/common';
import { LeadImportsRepository, LeadsRepository } from '@app/database';
import { LeadImport } from './lead-import.service';

/** CSV lead imports in resumable batches, and the sweep that takes up those whose job was lost. */
@Module({
  providers: [LeadImportsRepository, LeadsRepository, LeadImport],
})
export class LeadsModule {}
