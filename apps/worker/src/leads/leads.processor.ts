import { Injectable, Module } from '@nestjs/common';
import { Job } from 'bullmq';
import { JobHandler, JobProcessor, Jobs, LeadImportJob, Queues } from '@app/jobs';
import { LeadImport } from './lead-import.service';

@Injectable()
export class LeadsProcessor extends JobProcessor {
  readonly queueName = Queues.leads;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.importLeads.name]: (job) => this.imports.run((job as Job<LeadImportJob>).data.importId),
  };

  constructor(private readonly imports: LeadImport) {
    super();
  }
}

@Module({ providers: [LeadImport, LeadsProcessor], exports: [LeadsProcessor, LeadImport] })
export class LeadsModule {}
