import { Injectable } from '@nestjs/common';
import { Errors, ImportLeadsRequest, LeadImportAcceptedResponse, LeadImportEnvelope } from '@app/contracts';
import { LeadImportsRepository } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import type { AuthenticatedUser } from '../auth/auth-context';

/** Errors shown with the progress; all of them are in the CSV download. */
const ERRORS_SHOWN = 100;

/** CSV text: a field with a comma, quote or line break is quoted, quotes doubled. */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

@Injectable()
export class LeadImportsService {
  constructor(
    private readonly imports: LeadImportsRepository,
    private readonly jobs: JobQueue,
  ) {}

  /** Keeps the file with the import row (any worker can read it) and starts the import on the worker. */
  async start(
    user: AuthenticatedUser,
    campaignId: number,
    request: ImportLeadsRequest,
  ): Promise<LeadImportAcceptedResponse> {
    const id = await this.imports.transaction(async (imports) => {
      if (!(await imports.lockCampaign(user.id, campaignId))) throw Errors.campaignNotFound();
      return imports.insert(user.id, campaignId, request.file!.buffer);
    });
    try {
      await this.jobs.enqueue(Jobs.importLeads, { importId: id });
    } catch {
      await this.imports.delete(id);
      throw Errors.serviceUnavailable();
    }
    return { message: 'Lead import started.', data: { id, status: 'pending' } };
  }

  async progress(user: AuthenticatedUser, campaignId: number, importId: number): Promise<LeadImportEnvelope> {
    const row = await this.find(user, campaignId, importId);
    const errors = await this.imports.listErrors(importId, ERRORS_SHOWN);
    return {
      data: {
        id: row.id,
        status: row.status,
        rows_total: row.rows_total,
        rows_imported: row.rows_imported,
        rows_failed: row.rows_failed,
        errors,
      },
    };
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
