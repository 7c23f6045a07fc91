import { Injectable, Module } from '@nestjs/common';
import { LeadImportsRepository, LeadsRepository } from '@app/database';
import { handle, JobProcessor, Jobs, Queues } from '@app/jobs';
import { LeadImport } from './lead-import.service';

@Injectable()
export class LeadsProcessor extends JobProcessor {
  readonly queueName = Queues.leads;

  protected readonly handlers = [handle(Jobs.importLeads, (job) => this.imports.run(job.data.importId))];

  constructor(private readonly imports: LeadImport) {
    super();
  }
}

@Module({
  providers: [LeadImportsRepository, LeadsRepository, LeadImport, LeadsProcessor],
  exports: [LeadsProcessor, LeadImport],
})
export class LeadsModule {}
