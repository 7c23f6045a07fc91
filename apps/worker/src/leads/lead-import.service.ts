import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { parse } from 'csv-parse/sync';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { toE164 } from '@app/contracts';
import { JobQueue, Jobs, LIVE_JOB_STATES } from '@app/jobs';
import { JobMetrics } from '../job-metrics';

/** Rows written per transaction; progress (and the resume point) moves by this much. */
const BATCH_ROWS = 1000;
const PHONE_COLUMN = 'phone_number';

interface ImportRow {
  id: number;
  user_id: number;
  campaign_id: number;
  status: string;
  file: Buffer | null;
  rows_done: number;
}

interface RowError {
  row: number;
  column: string;
  message: string;
}

/** Comma or semicolon, whichever the header line uses more. */
function delimiterOf(text: string): string {
  const header = text.slice(0, text.search(/\r?\n|$/));
  return (header.match(/;/g) ?? []).length > (header.match(/,/g) ?? []).length ? ';' : ',';
}

/**
 * Imports a CSV of leads: a header row with a `phone_number` column (any letter case), every other column a
 * variable. Each batch of rows is written in one transaction together with the count of rows done, so a worker
 * that dies mid-import is followed by one that carries on from the last batch: no row lost, none twice.
 */
@Injectable()
export class LeadImport {
  private readonly logger = new Logger(LeadImport.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
    private readonly metrics: JobMetrics,
  ) {}

  /**
   * Imports unfinished whose lease lapsed (no batch written, no start, for IMPORT_STUCK_AFTER_SECONDS) and whose job is
   * not alive (lost between the API's write and its enqueue, or failed by BullMQ after stalling twice) are enqueued
   * again; they carry on from their progress. A live job writes a batch (and renews the lease) every few seconds.
   */
  async sweep(): Promise<{ requeued: number }> {
    const stuck: { id: number }[] = await this.dataSource.query(
      `SELECT id FROM lead_imports
        WHERE status IN ('pending', 'processing') AND updated_at < now() - make_interval(secs => $1)
        ORDER BY updated_at LIMIT 100`,
      [this.config.importStuckAfterSeconds],
    );
    const queue = this.jobs.queue(Jobs.importLeads.queue);
    let requeued = 0;
    for (const { id } of stuck) {
      const existing = await queue.getJob(Jobs.importLeads.jobId!({ importId: id }));
      const state = existing ? await existing.getState() : undefined;
      if (state && LIVE_JOB_STATES.has(state)) continue;
      await existing?.remove();
      await this.dataSource.query(`UPDATE lead_imports SET updated_at = now() WHERE id = $1`, [id]);
      await this.jobs.enqueue(Jobs.importLeads, { importId: id });
      requeued++;
    }
    if (requeued > 0) this.logger.log({ requeued }, 'requeued stuck lead imports');
    this.metrics.jobsRequeued(Jobs.importLeads.name, requeued);
    return { requeued };
  }

  async run(importId: number): Promise<{ status: string }> {
    const [rows] = (await this.dataSource.query(
      `UPDATE lead_imports SET status = 'processing', updated_at = now()
        WHERE id = $1 AND status IN ('pending', 'processing') RETURNING id, user_id, campaign_id, status, file, rows_done`,
      [importId],
    )) as [ImportRow[], number];
    const job = rows[0];
    if (!job?.file) return { status: 'skipped' };

    const text = job.file.toString('utf8').replace(/^\uFEFF/, '');
    let records: string[][];
    try {
      records = parse(text, {
        delimiter: delimiterOf(text),
        skip_empty_lines: true,
        relax_column_count: true,
        trim: true,
      });
    } catch (error) {
      return this.fail(job.id, `The file is not valid CSV: ${(error as Error).message}`);
    }
    const header = (records.shift() ?? []).map((name) => name.trim());
    const phoneIndex = header.findIndex((name) => name.toLowerCase() === PHONE_COLUMN);
    if (phoneIndex < 0) return this.fail(job.id, 'The file needs a header row with a phone_number column.');

    await this.dataSource.query(`UPDATE lead_imports SET rows_total = $2 WHERE id = $1`, [job.id, records.length]);
    for (let start = job.rows_done; start < records.length; start += BATCH_ROWS) {
      await this.importBatch(job, header, phoneIndex, records.slice(start, start + BATCH_ROWS), start);
    }
    await this.dataSource.query(
      `UPDATE lead_imports SET status = 'completed', file = NULL, updated_at = now() WHERE id = $1`,
      [job.id],
    );
    return { status: 'completed' };
  }

  private async importBatch(job: ImportRow, header: string[], phoneIndex: number, rows: string[][], offset: number) {
    await this.dataSource.transaction(async (manager) => {
      // The campaign before the import, as the campaign's delete takes them: taken the other way round, a delete
      // during an import deadlocks (it holds the campaign and waits for the import; the leads' insert the reverse).
      const [campaign] = await manager.query(`SELECT id FROM campaigns WHERE id = $1 FOR KEY SHARE`, [job.campaign_id]);
      if (!campaign) return;
      // Only one worker writes an import at a time; a second one waits, then sees the progress the first made.
      const [locked] = await manager.query(`SELECT rows_done FROM lead_imports WHERE id = $1 FOR UPDATE`, [job.id]);
      if (!locked || locked.rows_done !== offset) return;
      const errors: RowError[] = [];
      const candidates: { phone: string; variables: Record<string, string>; row: number }[] = [];
      rows.forEach((cells, index) => {
        const row = offset + index + 2; // the header is line 1
        const phone = toE164(cells[phoneIndex] ?? '');
        if (!phone) {
          errors.push({ row, column: PHONE_COLUMN, message: 'The phone number field must be a valid phone number.' });
          return;
        }
        const variables: Record<string, string> = {};
        header.forEach((name, column) => {
          if (column !== phoneIndex && name && cells[column] !== undefined) variables[name] = cells[column];
        });
        candidates.push({ phone, variables, row });
      });
      const existing = new Set<string>(
        (
          await manager.query(`SELECT phone_number FROM leads WHERE campaign_id = $1 AND phone_number = ANY($2)`, [
            job.campaign_id,
            candidates.map((candidate) => candidate.phone),
          ])
        ).map((row: { phone_number: string }) => row.phone_number),
      );
      const accepted = candidates.filter((candidate) => {
        if (existing.has(candidate.phone)) {
          errors.push({
            row: candidate.row,
            column: PHONE_COLUMN,
            message: 'The phone number has already been taken.',
          });
          return false;
        }
        existing.add(candidate.phone);
        return true;
      });
      if (accepted.length > 0) {
        await manager.query(
          `INSERT INTO leads (user_id, campaign_id, phone_number, variables)
           SELECT $1, $2, item->>'phone', item->'variables' FROM jsonb_array_elements($3::jsonb) AS rows(item)`,
          [job.user_id, job.campaign_id, JSON.stringify(accepted)],
        );
      }
      if (errors.length > 0) {
        await manager.query(
          `INSERT INTO lead_import_errors (import_id, row, "column", message)
           SELECT $1, (item->>'row')::int, item->>'column', item->>'message' FROM jsonb_array_elements($2::jsonb) AS rows(item)
           ON CONFLICT DO NOTHING`,
          [job.id, JSON.stringify(errors)],
        );
      }
      await manager.query(
        `UPDATE lead_imports SET rows_done = rows_done + $2, rows_imported = rows_imported + $3,
                                 rows_failed = rows_failed + $4, updated_at = now()
          WHERE id = $1`,
        [job.id, rows.length, accepted.length, rows.length - accepted.length],
      );
    });
  }

  private async fail(importId: number, message: string): Promise<{ status: string }> {
    this.logger.warn({ importId, error: message }, 'lead import failed');
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE lead_imports SET status = 'failed', error = $2, file = NULL, updated_at = now() WHERE id = $1`,
        [importId, message],
      );
      await manager.query(
        `INSERT INTO lead_import_errors (import_id, row, "column", message) VALUES ($1, 1, $2, $3) ON CONFLICT DO NOTHING`,
        [importId, PHONE_COLUMN, message],
      );
    });
    return { status: 'failed' };
  }
}
