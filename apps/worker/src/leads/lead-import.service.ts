import { Injectable, Logger } from '@nestjs/common';
import { parse } from 'csv-parse/sync';
import { AppConfig } from '@app/config';
import { toE164 } from '@app/contracts';
import {
  type LeadImportErrorRow,
  type LeadImportRow,
  LeadImportsRepository,
  LeadsRepository,
  Transactions,
} from '@app/database';
import {
  type FailureReason,
  FailureReasons,
  HandlesJob,
  JobQueue,
  type JobFailed,
  jobFailed,
  Jobs,
  type LeadImportJob,
  LIVE_JOB_STATES,
} from '@app/jobs';
import { JobMetrics } from '../job-metrics';
import { errorMessage } from '@app/platform';

/** Rows written per transaction; progress (and the resume point) moves by this much. */
const BATCH_ROWS = 1000;
const PHONE_COLUMN = 'phone_number';

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
    private readonly imports: LeadImportsRepository,
    private readonly leads: LeadsRepository,
    private readonly transactions: Transactions,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
    private readonly metrics: JobMetrics,
  ) {}

  /**
   * Imports unfinished whose lease lapsed (no batch written, no start, for IMPORT_STUCK_AFTER_SECONDS) and whose job is
   * not alive (lost between the API's write and its enqueue, or failed by BullMQ after stalling twice) are enqueued
   * again; they carry on from their progress. A live job writes a batch (and renews the lease) every few seconds.
   */
  @HandlesJob(Jobs.sweepStuckImports)
  async sweep(): Promise<{ requeued: number }> {
    const stuck = await this.imports.findStuck(this.config.importStuckAfterSeconds);
    const queue = this.jobs.queue(Jobs.importLeads.queue);
    let requeued = 0;
    for (const id of stuck) {
      const existing = await queue.getJob(Jobs.importLeads.jobId!({ importId: id }));
      const state = existing ? await existing.getState() : undefined;
      if (state && LIVE_JOB_STATES.has(state)) continue;
      await existing?.remove();
      await this.imports.touch(id);
      await this.jobs.enqueue(Jobs.importLeads, { importId: id });
      requeued++;
    }
    if (requeued > 0) this.logger.log({ requeued }, 'requeued stuck lead imports');
    this.metrics.jobsRequeued(Jobs.importLeads.name, requeued);
    return { requeued };
  }

  @HandlesJob(Jobs.importLeads)
  async run({ importId }: LeadImportJob): Promise<{ status: string } | JobFailed> {
    const job = await this.imports.start(importId);
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
      return this.fail(job.id, `The file is not valid CSV: ${errorMessage(error)}`, FailureReasons.notCsv);
    }
    const header = (records.shift() ?? []).map((name) => name.trim());
    const phoneIndex = header.findIndex((name) => name.toLowerCase() === PHONE_COLUMN);
    if (phoneIndex < 0)
      return this.fail(job.id, 'The file needs a header row with a phone_number column.', FailureReasons.noPhoneColumn);

    await this.imports.setRowsTotal(job.id, records.length);
    for (let start = job.rows_done; start < records.length; start += BATCH_ROWS) {
      await this.importBatch(job, header, phoneIndex, records.slice(start, start + BATCH_ROWS), start);
    }
    await this.imports.complete(job.id);
    return { status: 'completed' };
  }

  private async importBatch(
    job: LeadImportRow,
    header: string[],
    phoneIndex: number,
    rows: string[][],
    offset: number,
  ) {
    await this.transactions.run(async (transaction) => {
      const imports = this.imports.within(transaction);
      const leads = this.leads.within(transaction);
      // The campaign before the import, as the campaign's delete takes them: taken the other way round, a delete
      // during an import deadlocks (it holds the campaign and waits for the import; the leads' insert the reverse).
      if (!(await imports.lockCampaignById(job.campaign_id))) return;
      // Only one worker writes an import at a time; a second one waits, then sees the progress the first made.
      if ((await imports.lockRowsDone(job.id)) !== offset) return;
      const errors: LeadImportErrorRow[] = [];
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
      const existing = new Set(
        await leads.phoneNumbersInCampaign(
          job.campaign_id,
          candidates.map((candidate) => candidate.phone),
        ),
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
      if (accepted.length > 0) await leads.insertMany(job.user_id, job.campaign_id, accepted);
      if (errors.length > 0) await imports.insertErrors(job.id, errors);
      await imports.advance(job.id, rows.length, accepted.length, rows.length - accepted.length);
    });
  }

  private async fail(importId: number, message: string, reason: FailureReason): Promise<JobFailed> {
    this.logger.warn({ importId, error: message }, 'lead import failed');
    await this.imports.fail(importId, message, PHONE_COLUMN);
    return jobFailed(reason);
  }
}
