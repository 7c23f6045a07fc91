import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CampaignRow } from '@app/contracts';
import { outboundTrunkOf } from './phone-number-holders';
import { withStatementBound } from './bounded-client';
import { lockReferences } from './transactions';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** What a campaign's write sets; `allowed_days` as JSON. Left out (undefined) on an update: kept as it is. */
export interface CampaignValues {
  name: string;
  assistant_id: number;
  timezone: string;
  max_calls_in_parallel: number;
  allowed_hours_start_time: string | null;
  allowed_hours_end_time: string | null;
  allowed_days: string;
  max_retries: number;
  retry_interval: number;
}

/** A campaign's delete may take this long a statement (about 100,000 leads at the rate measured), not the API's bound. */
const CAMPAIGN_DELETE_TIMEOUT_MS = 10 * 60_000;

const SELECT_CAMPAIGNS = `
  SELECT c.id, c.name, c.assistant_id, c.status, c.timezone, c.max_calls_in_parallel, c.allowed_hours_start_time,
         c.allowed_hours_end_time, c.allowed_days, c.max_retries, c.retry_interval, c.created_at, c.updated_at,
         COALESCE((SELECT array_agg(p.phone_number_id ORDER BY p.position) FROM campaign_phone_numbers p
                    WHERE p.campaign_id = c.id), '{}') AS phone_number_ids,
         (SELECT count(*) FROM leads l WHERE l.campaign_id = c.id)::int AS leads_count
    FROM campaigns c`;

/**
 * An account's campaigns and their caller numbers. Methods that lock or write run in the caller's transaction
 * (`Transactions.run` or `runRetrying`, joined with `within`); the row locks they take keep the order an assistant's or a number's
 * delete takes them in: references first, then the campaign.
 */
@Injectable()
export class CampaignsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** A page of the account's campaigns, newest first, and how many it has. */
  async list(ownerId: number, limit: number, offset: number): Promise<[CampaignRow[], number]> {
    const [rows, [{ total }]] = await Promise.all([
      this.reads.query<CampaignRow>(
        ownerId,
        `${SELECT_CAMPAIGNS} WHERE c.user_id = $1 ORDER BY c.id DESC LIMIT $2 OFFSET $3`,
        [ownerId, limit, offset],
      ),
      this.reads.query(ownerId, `SELECT count(*)::int AS total FROM campaigns WHERE user_id = $1`, [ownerId]),
    ]);
    return [rows, total];
  }

  /** On the primary (in the transaction, if any). */
  async find(ownerId: number, id: number): Promise<CampaignRow | undefined> {
    const [row] = (await this.manager.query(`${SELECT_CAMPAIGNS} WHERE c.id = $1 AND c.user_id = $2`, [
      id,
      ownerId,
    ])) as CampaignRow[];
    return row;
  }

  /** The type of the account's assistant, locked so that it cannot be deleted before the campaign is written. */
  async lockAssistantType(ownerId: number, assistantId: number): Promise<string | undefined> {
    const [assistant] = await this.manager.query(
      `SELECT type FROM assistants WHERE id = $1 AND user_id = $2 FOR KEY SHARE`,
      [assistantId, ownerId],
    );
    return assistant?.type;
  }

  /** Those of `ids` that are active numbers of the account, locked (see `Transaction.lockReferences`). */
  lockActiveNumbers(ownerId: number, ids: readonly number[]): Promise<Set<number>> {
    return lockReferences(this.manager, 'phone_numbers', ids, ownerId, `AND status = 'active'`);
  }

  async insert(ownerId: number, values: CampaignValues): Promise<number> {
    const [{ id }] = await this.manager.query(
      `INSERT INTO campaigns (user_id, name, assistant_id, timezone, max_calls_in_parallel, allowed_hours_start_time,
                                allowed_hours_end_time, allowed_days, max_retries, retry_interval)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [
        ownerId,
        values.name,
        values.assistant_id,
        values.timezone,
        values.max_calls_in_parallel,
        values.allowed_hours_start_time,
        values.allowed_hours_end_time,
        values.allowed_days,
        values.max_retries,
        values.retry_interval,
      ],
    );
    return id;
  }

  /** Holds the account's campaign against other writes until the transaction ends; false when there is none. */
  async lock(ownerId: number, id: number): Promise<boolean> {
    const [locked] = await this.manager.query(
      `SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 FOR NO KEY UPDATE`,
      [id, ownerId],
    );
    return Boolean(locked);
  }

  /** Sets the values given (the others kept) and the update time. */
  async update(ownerId: number, id: number, values: Partial<CampaignValues>): Promise<void> {
    const changed = Object.entries(values).filter(([, value]) => value !== undefined);
    await this.manager.query(
      `UPDATE campaigns SET ${[...changed.map(([column], index) => `${column} = $${index + 3}`), 'updated_at = now()'].join(', ')}
          WHERE id = $1 AND user_id = $2`,
      [id, ownerId, ...changed.map(([, value]) => value)],
    );
  }

  /** The campaign's caller numbers become `numbers`, in that order (a number given twice at its first place). */
  async replaceNumbers(id: number, numbers: number[]): Promise<void> {
    await this.manager.query(`DELETE FROM campaign_phone_numbers WHERE campaign_id = $1`, [id]);
    await this.manager.query(
      `INSERT INTO campaign_phone_numbers (campaign_id, phone_number_id, position)
       SELECT $1, number_id, min(position) FROM unnest($2::int[]) WITH ORDINALITY AS item(number_id, position)
       GROUP BY number_id`,
      [id, numbers],
    );
  }

  /**
   * Deletes the account's campaign and, with it, its leads; false when there is none. Its leads are locked before any
   * is deleted: deleting one moves the account's lead counters, so a lead update holding its lead while waiting for
   * those counters would otherwise deadlock with the delete.
   */
  delete(ownerId: number, id: number): Promise<boolean> {
    // Its leads' counters move one lead at a time, in a time that grows with the square of their number (3,000 leads
    // 0.8 s, 20,000 leads 26 s): longer than any other request's statement, so it has a bound of its own.
    return withStatementBound(CAMPAIGN_DELETE_TIMEOUT_MS, () => this.deleteCampaign(ownerId, id));
  }

  private deleteCampaign(ownerId: number, id: number): Promise<boolean> {
    return this.retryingTransaction(async (campaigns) => {
      const [campaign] = await campaigns.manager.query(
        `SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 FOR UPDATE`,
        [id, ownerId],
      );
      if (!campaign) return false;
      await campaigns.manager.query(`SELECT id FROM leads WHERE campaign_id = $1 ORDER BY id FOR UPDATE`, [id]);
      await campaigns.manager.query(`DELETE FROM campaigns WHERE id = $1`, [id]);
      return true;
    });
  }

  /** The account's campaign's status and assistant, locked until the transaction ends. */
  async lockStatus(
    ownerId: number,
    id: number,
  ): Promise<{ id: number; status: string; assistant_id: number | null } | undefined> {
    const [campaign] = await this.manager.query(
      `SELECT id, status, assistant_id FROM campaigns WHERE id = $1 AND user_id = $2 FOR UPDATE`,
      [id, ownerId],
    );
    return campaign;
  }

  async stop(id: number): Promise<void> {
    await this.manager.query(`UPDATE campaigns SET status = 'stopped', updated_at = now() WHERE id = $1`, [id]);
  }

  async start(id: number): Promise<void> {
    await this.manager.query(`UPDATE campaigns SET status = 'in-progress', updated_at = now() WHERE id = $1`, [id]);
  }

  /** How many of the campaign's leads are in one of `statuses`. */
  async countLeads(id: number, statuses: readonly string[]): Promise<number> {
    const [{ open }] = await this.manager.query(
      `SELECT count(*)::int AS open FROM leads WHERE campaign_id = $1 AND status = ANY($2)`,
      [id, statuses],
    );
    return open;
  }

  /**
   * The numbers the campaign calls from, as the dialer picks them (its own, or else its assistant's), and how many of
   * them can place calls (have a provider outbound trunk).
   */
  async countCallerNumbers(id: number, assistantId: number): Promise<{ numbers: number; callable: number }> {
    const [counts] = await this.manager.query(
      `WITH own AS (SELECT phone_number_id AS id FROM campaign_phone_numbers WHERE campaign_id = $1),
            numbers AS (SELECT id FROM own
                         UNION ALL
                        SELECT phone_number_id FROM assistants
                         WHERE id = $2 AND phone_number_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM own))
       SELECT count(*)::int AS numbers, count(*) FILTER (WHERE ${outboundTrunkOf('numbers.id')} IS NOT NULL)::int AS callable
         FROM numbers`,
      [id, assistantId],
    );
    return counts;
  }
}
