import { Injectable, type OnModuleInit } from '@nestjs/common';
import {
  Errors,
  ImportLeadsRequest,
  LeadImportAcceptedResponse,
  LeadImportEnvelope,
  toLeadImportResponse,
} from '@app/contracts';
import { LeadImportsRepository, Transactions } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

/** Errors shown with the progress; all of them are in the CSV download. */
const ERRORS_SHOWN = 100;

/** CSV text: a field with a comma, quote or line break is quoted, quotes doubled. */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

@Injectable()
export class LeadImportsService implements OnModuleInit {
  constructor(
    private readonly imports: LeadImportsRepository,
    private readonly transactions: Transactions,
    private readonly jobs: JobQueue,
    private readonly creates: IdempotentCreates,
  ) {}

  /** The import's job may not have been queued before its process died: queued again (its id makes it once). */
  onModuleInit(): void {
    this.creates.recoverWith('lead-import', async (user, id) => {
      const status = await this.imports.statusOf(user.id, id);
      if (status === undefined) throw Errors.leadImportNotFound();
      if (status === 'pending') await this.enqueue(id);
      return this.started(id);
    });
  }

  /** Keeps the file with the import row (any worker can read it) and starts the import on the worker. */
  async start(
    user: AuthenticatedUser,
    campaignId: number,
    request: ImportLeadsRequest,
  ): Promise<LeadImportAcceptedResponse> {
    const id = await this.transactions.run(async (transaction) => {
      const imports = this.imports.within(transaction);
      if (!(await imports.lockCampaign(user.id, campaignId))) throw Errors.campaignNotFound();
      const created = await imports.insert(user.id, campaignId, request.file!.buffer);
      await this.creates.record(transaction, 'lead-import', created);
      return created;
    });
    try {
      await this.enqueue(id);
    } catch {
      await this.imports.delete(id);
      throw Errors.serviceUnavailable();
    }
    return this.started(id);
  }

  private async enqueue(importId: number): Promise<void> {
    await this.jobs.enqueue(Jobs.importLeads, { importId });
  }

  private started(id: number): LeadImportAcceptedResponse {
    return { message: 'Lead import started.', data: { id, status: 'pending' } };
  }

  async progress(user: AuthenticatedUser, campaignId: number, importId: number): Promise<LeadImportEnvelope> {
    const row = await this.find(user, campaignId, importId);
    const errors = await this.imports.listErrors(importId, ERRORS_SHOWN);
    return { data: toLeadImportResponse(row, errors) };
  }

  async errorsCsv(user: AuthenticatedUser, campaignId: number, importId: number): Promise<string> {
    await this.find(user, campaignId, importId);
    const errors = await this.imports.listErrors(importId);
    return [
      'row,column,message',
      ...errors.map((error) => [error.row, error.column, error.message].map(csvField).join(',')),
    ]
      .join('\r\n')
      .concat('\r\n');
  }

  private async find(user: AuthenticatedUser, campaignId: number, importId: number) {
    const row = await this.imports.find(user.id, campaignId, importId);
    if (!row) throw Errors.leadImportNotFound();
    return row;
  }
}
