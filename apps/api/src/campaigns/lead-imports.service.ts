import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Errors, ImportLeadsRequest, LeadImportAcceptedResponse, LeadImportEnvelope } from '@app/contracts';
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: JobQueue,
  ) {}

  /** Keeps the file with the import row (any worker can read it) and starts the import on the worker. */
  async start(
    user: AuthenticatedUser,
    campaignId: number,
    request: ImportLeadsRequest,
  ): Promise<LeadImportAcceptedResponse> {
    const id = await this.dataSource.transaction(async (manager) => {
      // Locked so that a concurrent delete of the campaign waits for the import row (and then deletes it too).
      const [campaign] = await manager.query(`SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 FOR KEY SHARE`, [
        campaignId,
        user.id,
      ]);
      if (!campaign) throw Errors.campaignNotFound();
      const [row] = await manager.query(
        `INSERT INTO lead_imports (user_id, campaign_id, file) VALUES ($1, $2, $3) RETURNING id`,
        [user.id, campaignId, request.file!.buffer],
      );
      return row.id as number;
    });
    try {
      await this.jobs.enqueue(Jobs.importLeads, { importId: id });
    } catch {
      await this.dataSource.query(`DELETE FROM lead_imports WHERE id = $1`, [id]);
      throw Errors.serviceUnavailable();
    }
    return { message: 'Lead import started.', data: { id, status: 'pending' } };
  }

  async progress(user: AuthenticatedUser, campaignId: number, importId: number): Promise<LeadImportEnvelope> {
    const row = await this.find(user, campaignId, importId);
    const errors = await this.dataSource.query(
      `SELECT row, "column", message FROM lead_import_errors WHERE import_id = $1 ORDER BY row, "column" LIMIT $2`,
      [importId, ERRORS_SHOWN],
    );
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
    const errors: { row: number; column: string; message: string }[] = await this.dataSource.query(
      `SELECT row, "column", message FROM lead_import_errors WHERE import_id = $1 ORDER BY row, "column"`,
      [importId],
    );
    return [
      'row,column,message',
      ...errors.map((error) => [error.row, error.column, error.message].map(csvField).join(',')),
    ]
      .join('\r\n')
      .concat('\r\n');
  }

  private async find(user: AuthenticatedUser, campaignId: number, importId: number) {
    const [row] = await this.dataSource.query(
      `SELECT id, status, rows_total, rows_imported, rows_failed FROM lead_imports
        WHERE id = $1 AND campaign_id = $2 AND user_id = $3`,
      [importId, campaignId, user.id],
    );
    if (!row) throw Errors.leadImportNotFound();
    return row as { id: number; status: string; rows_total: number; rows_imported: number; rows_failed: number };
  }
}
