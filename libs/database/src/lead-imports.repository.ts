import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { LeadImportProgressRow } from '@app/contracts';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** An import as the worker takes it up: its file (until it is done) and how many rows it has done. */
export interface LeadImportRow {
  id: number;
  user_id: number;
  campaign_id: number;
  status: string;
  file: Buffer | null;
  rows_done: number;
}

/** A row of the file that was not imported, and why. */
export interface LeadImportErrorRow {
  row: number;
  column: string;
  message: string;
}

/**
 * Lead imports (a CSV file kept with its row until the worker has done it) and their errors. The API's reads and
 * writes take the owner id; the worker's, by import id, are the system's own.
 */
@Injectable()
export class LeadImportsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** Locks the account's campaign so that a concurrent delete of it waits for the import row (and deletes it too). */
  async lockCampaign(ownerId: number, campaignId: number): Promise<boolean> {
    const [campaign] = await this.manager.query(
      `SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 FOR KEY SHARE`,
      [campaignId, ownerId],
    );
    return Boolean(campaign);
  }

  async insert(ownerId: number, campaignId: number, file: Buffer): Promise<number> {
    const [row] = await this.manager.query(
      `INSERT INTO lead_imports (user_id, campaign_id, file) VALUES ($1, $2, $3) RETURNING id`,
      [ownerId, campaignId, file],
    );
    return row.id as number;
  }

  /** An import nobody will run (its job could not be queued). */
  async delete(id: number): Promise<void> {
    await this.manager.query(`DELETE FROM lead_imports WHERE id = $1`, [id]);
  }

  async find(ownerId: number, campaignId: number, importId: number): Promise<LeadImportProgressRow | undefined> {
    const [row] = await this.manager.query(
      `SELECT id, status, rows_total, rows_imported, rows_failed FROM lead_imports
        WHERE id = $1 AND campaign_id = $2 AND user_id = $3`,
      [importId, campaignId, ownerId],
    );
    return row;
  }

  /** The import's status, whatever its campaign. */
  async statusOf(ownerId: number, importId: number): Promise<string | undefined> {
    const [row] = (await this.manager.query(`SELECT status FROM lead_imports WHERE id = $1 AND user_id = $2`, [
      importId,
      ownerId,
    ])) as { status: string }[];
    return row?.status;
  }

  /** The import's errors by row and column: the first `limit`, or all of them. */
  listErrors(importId: number, limit?: number): Promise<LeadImportErrorRow[]> {
    return limit === undefined
      ? this.manager.query(
          `SELECT row, "column", message FROM lead_import_errors WHERE import_id = $1 ORDER BY row, "column"`,
          [importId],
        )
      : this.manager.query(
          `SELECT row, "column", message FROM lead_import_errors WHERE import_id = $1 ORDER BY row, "column" LIMIT $2`,
          [importId, limit],
        );
  }

  // The worker's.

  /** Unfinished imports not written to for `seconds` (their lease lapsed), oldest first. */
  async findStuck(seconds: number): Promise<number[]> {
    const stuck: { id: number }[] = await this.manager.query(
      `SELECT id FROM lead_imports
        WHERE status IN ('pending', 'processing') AND updated_at < now() - make_interval(secs => $1)
        ORDER BY updated_at LIMIT 100`,
      [seconds],
    );
    return stuck.map(({ id }) => id);
  }

  /** Renews the import's lease. */
  async touch(id: number): Promise<void> {
    await this.manager.query(`UPDATE lead_imports SET updated_at = now() WHERE id = $1`, [id]);
  }

  /** Marks an unfinished import `processing` and returns it; undefined when it is finished or gone. */
  async start(id: number): Promise<LeadImportRow | undefined> {
    const [rows] = (await this.manager.query(
      `UPDATE lead_imports SET status = 'processing', updated_at = now()
        WHERE id = $1 AND status IN ('pending', 'processing') RETURNING id, user_id, campaign_id, status, file, rows_done`,
      [id],
    )) as [LeadImportRow[], number];
    return rows[0];
  }

  async setRowsTotal(id: number, total: number): Promise<void> {
    await this.manager.query(`UPDATE lead_imports SET rows_total = $2 WHERE id = $1`, [id, total]);
  }

  /** Done: its file goes. */
  async complete(id: number): Promise<void> {
    await this.manager.query(
      `UPDATE lead_imports SET status = 'completed', file = NULL, updated_at = now() WHERE id = $1`,
      [id],
    );
  }

  /**
   * Locks the import's campaign (whoever's) before the import itself, as the campaign's delete takes them; false when
   * the campaign is gone.
   */
  async lockCampaignById(campaignId: number): Promise<boolean> {
    const [campaign] = await this.manager.query(`SELECT id FROM campaigns WHERE id = $1 FOR KEY SHARE`, [campaignId]);
    return Boolean(campaign);
  }

  /** The rows the import has done, locked so that one worker at a time writes it; undefined when it is gone. */
  async lockRowsDone(id: number): Promise<number | undefined> {
    const [locked] = await this.manager.query(`SELECT rows_done FROM lead_imports WHERE id = $1 FOR UPDATE`, [id]);
    return locked?.rows_done;
  }

  /** Records rows not imported; one already recorded at that row and column is kept. */
  async insertErrors(id: number, errors: LeadImportErrorRow[]): Promise<void> {
    await this.manager.query(
      `INSERT INTO lead_import_errors (import_id, row, "column", message)
           SELECT $1, (item->>'row')::int, item->>'column', item->>'message' FROM jsonb_array_elements($2::jsonb) AS rows(item)
           ON CONFLICT DO NOTHING`,
      [id, JSON.stringify(errors)],
    );
  }

  /** Counts a batch: `done` rows, `imported` of them imported, `failed` not. */
  async advance(id: number, done: number, imported: number, failed: number): Promise<void> {
    await this.manager.query(
      `UPDATE lead_imports SET rows_done = rows_done + $2, rows_imported = rows_imported + $3,
                                 rows_failed = rows_failed + $4, updated_at = now()
          WHERE id = $1`,
      [id, done, imported, failed],
    );
  }

  /** Ends the import `failed` (its file goes) with the reason as the error of the file's first row, at `column`. */
  fail(id: number, message: string, column: string): Promise<void> {
    return this.transaction(async (imports) => {
      await imports.manager.query(
        `UPDATE lead_imports SET status = 'failed', error = $2, file = NULL, updated_at = now() WHERE id = $1`,
        [id, message],
      );
      await imports.manager.query(
        `INSERT INTO lead_import_errors (import_id, row, "column", message) VALUES ($1, 1, $2, $3) ON CONFLICT DO NOTHING`,
        [id, column, message],
      );
    });
  }
}
