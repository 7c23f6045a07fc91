import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  CampaignEnvelope,
  CampaignMessageEnvelope,
  CampaignResponse,
  CampaignStatusRequest,
  CampaignStatusResponse,
  CreateCampaignRequest,
  Errors,
  humaniseAttribute,
  LengthAwarePage,
  lengthAwarePage,
  MessageResponse,
  OPEN_LEAD_STATUSES,
  PageQuery,
  UpdateCampaignRequest,
  ValidationFailed,
  WEEKDAYS,
} from '@app/contracts';
import { lockReferences, ReadReplicas, retryingTransaction } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import { pageLocation } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';

interface CampaignRow {
  id: number;
  name: string;
  assistant_id: number | null;
  status: string;
  timezone: string;
  max_calls_in_parallel: number;
  allowed_hours_start_time: string | null;
  allowed_hours_end_time: string | null;
  allowed_days: string[];
  max_retries: number;
  retry_interval: number;
  created_at: Date;
  updated_at: Date;
  phone_number_ids: number[];
  leads_count: number;
}

const SELECT_CAMPAIGNS = `
  SELECT c.id, c.name, c.assistant_id, c.status, c.timezone, c.max_calls_in_parallel, c.allowed_hours_start_time,
         c.allowed_hours_end_time, c.allowed_days, c.max_retries, c.retry_interval, c.created_at, c.updated_at,
         COALESCE((SELECT array_agg(p.phone_number_id ORDER BY p.position) FROM campaign_phone_numbers p
                    WHERE p.campaign_id = c.id), '{}') AS phone_number_ids,
         (SELECT count(*) FROM leads l WHERE l.campaign_id = c.id)::int AS leads_count
    FROM campaigns c`;

function toResponse(row: CampaignRow): CampaignResponse {
  return {
    id: row.id,
    name: row.name,
    assistant_id: row.assistant_id,
    status: row.status,
    timezone: row.timezone,
    phone_number_ids: row.phone_number_ids,
    max_calls_in_parallel: row.max_calls_in_parallel,
    allowed_hours_start_time: row.allowed_hours_start_time,
    allowed_hours_end_time: row.allowed_hours_end_time,
    allowed_days: row.allowed_days,
    max_retries: row.max_retries,
    retry_interval: row.retry_interval,
    leads_count: row.leads_count,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

@Injectable()
export class CampaignsService {
  private readonly logger = new Logger(CampaignsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reads: ReadReplicas,
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
  ) {}

  async list(user: AuthenticatedUser, query: PageQuery, request: Request): Promise<LengthAwarePage<CampaignResponse>> {
    const [rows, [{ total }]] = await Promise.all([
      this.reads.query<CampaignRow>(
        user.id,
        `${SELECT_CAMPAIGNS} WHERE c.user_id = $1 ORDER BY c.id DESC LIMIT $2 OFFSET $3`,
        [user.id, query.per_page, (query.page - 1) * query.per_page],
      ),
      this.reads.query(user.id, `SELECT count(*)::int AS total FROM campaigns WHERE user_id = $1`, [user.id]),
    ]);
    return lengthAwarePage(
      rows.map(toResponse),
      total,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
  }

  async get(user: AuthenticatedUser, id: number): Promise<CampaignEnvelope> {
    return { data: await this.read(this.dataSource.manager, user, id) };
  }

  async create(user: AuthenticatedUser, request: CreateCampaignRequest): Promise<CampaignMessageEnvelope> {
    const data = await retryingTransaction(this.dataSource, async (manager) => {
      await this.checkReferences(manager, user, request);
      const [{ id }] = await manager.query(
        `INSERT INTO campaigns (user_id, name, assistant_id, timezone, max_calls_in_parallel, allowed_hours_start_time,
                                allowed_hours_end_time, allowed_days, max_retries, retry_interval)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
        [
          user.id,
          request.name,
          request.assistant_id,
          request.timezone ?? 'UTC',
          request.max_calls_in_parallel ?? 3,
          request.allowed_hours_start_time ?? null,
          request.allowed_hours_end_time ?? null,
          JSON.stringify(request.allowed_days ?? WEEKDAYS),
          request.max_retries ?? 3,
          request.retry_interval ?? 60,
        ],
      );
      if (request.phone_number_ids) await this.replaceNumbers(manager, id, request.phone_number_ids);
      return this.read(manager, user, id);
    });
    return { message: 'Campaign created successfully.', data };
  }

  async update(user: AuthenticatedUser, id: number, request: UpdateCampaignRequest): Promise<CampaignMessageEnvelope> {
    const data = await retryingTransaction(this.dataSource, async (manager) => {
      await this.read(manager, user, id);
      // References first, then the campaign: the order in which an assistant's or a number's delete takes them.
      await this.checkReferences(manager, user, request);
      const [locked] = await manager.query(
        `SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 FOR NO KEY UPDATE`,
        [id, user.id],
      );
      if (!locked) throw Errors.campaignNotFound();
      const columns: Record<string, unknown> = {
        name: request.name,
        assistant_id: request.assistant_id,
        timezone: request.timezone,
        max_calls_in_parallel: request.max_calls_in_parallel,
        allowed_hours_start_time: request.allowed_hours_start_time,
        allowed_hours_end_time: request.allowed_hours_end_time,
        allowed_days: request.allowed_days === undefined ? undefined : JSON.stringify(request.allowed_days),
        max_retries: request.max_retries,
        retry_interval: request.retry_interval,
      };
      const changed = Object.entries(columns).filter(([, value]) => value !== undefined);
      await manager.query(
        `UPDATE campaigns SET ${[...changed.map(([column], index) => `${column} = $${index + 3}`), 'updated_at = now()'].join(', ')}
          WHERE id = $1 AND user_id = $2`,
        [id, user.id, ...changed.map(([, value]) => value)],
      );
      if (request.phone_number_ids) await this.replaceNumbers(manager, id, request.phone_number_ids);
      return this.read(manager, user, id);
    });
    return { message: 'Campaign updated successfully.', data };
  }

  /**
   * Its leads go with it. They are locked before any is deleted: deleting one moves the account's lead counters, so
   * a lead update holding its lead while waiting for those counters would otherwise deadlock with the delete.
   */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    await retryingTransaction(this.dataSource, async (manager) => {
      const [campaign] = await manager.query(`SELECT id FROM campaigns WHERE id = $1 AND user_id = $2 FOR UPDATE`, [
        id,
        user.id,
      ]);
      if (!campaign) throw Errors.campaignNotFound();
      await manager.query(`SELECT id FROM leads WHERE campaign_id = $1 ORDER BY id FOR UPDATE`, [id]);
      await manager.query(`DELETE FROM campaigns WHERE id = $1`, [id]);
    });
    return { message: 'Campaign deleted successfully.' };
  }

  async updateStatus(user: AuthenticatedUser, request: CampaignStatusRequest): Promise<CampaignStatusResponse> {
    const status = await this.dataSource.transaction(async (manager) => {
      const [campaign] = await manager.query(
        `SELECT id, status, assistant_id FROM campaigns WHERE id = $1 AND user_id = $2 FOR UPDATE`,
        [request.campaign_id, user.id],
      );
      if (!campaign) throw Errors.campaignNotFound();
      const refuse = (message: string) => ValidationFailed.field('campaign_id', message);
      if (request.action === 'stop') {
        if (campaign.status !== 'in-progress') throw refuse('The campaign is not running.');
        await manager.query(`UPDATE campaigns SET status = 'stopped', updated_at = now() WHERE id = $1`, [campaign.id]);
        return 'stopped';
      }
      if (campaign.status === 'in-progress') throw refuse('The campaign is already running.');
      if (campaign.assistant_id === null) throw refuse('The campaign has no assistant: its assistant was deleted.');
      const [{ open }] = await manager.query(
        `SELECT count(*)::int AS open FROM leads WHERE campaign_id = $1 AND status = ANY($2)`,
        [campaign.id, OPEN_LEAD_STATUSES],
      );
      if (open === 0) throw refuse('The campaign has no leads to call.');
      const [{ callable }] = await manager.query(
        `SELECT EXISTS (SELECT 1 FROM campaign_phone_numbers WHERE campaign_id = $1)
             OR EXISTS (SELECT 1 FROM assistants WHERE id = $2 AND phone_number_id IS NOT NULL) AS callable`,
        [campaign.id, campaign.assistant_id],
      );
      if (!callable) throw refuse('The campaign has no phone number to call from.');
      await manager.query(`UPDATE campaigns SET status = 'in-progress', updated_at = now() WHERE id = $1`, [
        campaign.id,
      ]);
      return 'in-progress';
    });
    // Best effort: the dialer's periodic look starts the campaign anyway when Redis refuses this job.
    if (status === 'in-progress') {
      await this.jobs
        .enqueue(Jobs.dialCampaign, { campaignId: request.campaign_id })
        .catch((error: Error) =>
          this.logger.warn({ error: error.message }, 'could not queue the campaign’s first dials'),
        );
    }
    return {
      message: status === 'stopped' ? 'Campaign stopped successfully.' : 'Campaign started successfully.',
      success: true,
      data: { campaign_id: request.campaign_id, status },
    };
  }

  private async read(manager: EntityManager, user: AuthenticatedUser, id: number): Promise<CampaignResponse> {
    const [row] = (await manager.query(`${SELECT_CAMPAIGNS} WHERE c.id = $1 AND c.user_id = $2`, [
      id,
      user.id,
    ])) as CampaignRow[];
    if (!row) throw Errors.campaignNotFound();
    return toResponse(row);
  }

  /** The assistant must be an outbound one of the account; caller numbers must be the account's. */
  private async checkReferences(
    manager: EntityManager,
    user: AuthenticatedUser,
    request: CreateCampaignRequest | UpdateCampaignRequest,
  ): Promise<void> {
    const errors: Record<string, string[]> = {};
    if (request.assistant_id !== undefined) {
      // Locked so that the assistant cannot be deleted before the campaign referencing it is written.
      const [assistant] = await manager.query(
        `SELECT type FROM assistants WHERE id = $1 AND user_id = $2 FOR KEY SHARE`,
        [request.assistant_id, user.id],
      );
      if (!assistant) errors.assistant_id = ['The selected assistant id is invalid.'];
      else if (assistant.type !== 'outbound')
        errors.assistant_id = ['The assistant id field must be an outbound assistant.'];
    }
    if (request.phone_number_ids?.length) {
      const found = await lockReferences(
        manager,
        'phone_numbers',
        request.phone_number_ids,
        user.id,
        `AND status = 'active'`,
      );
      request.phone_number_ids.forEach((id, index) => {
        if (!found.has(id))
          errors[`phone_number_ids.${index}`] = [
            `The selected ${humaniseAttribute(`phone_number_ids.${index}`)} is invalid.`,
          ];
      });
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
  }

  private async replaceNumbers(manager: EntityManager, id: number, numbers: number[]): Promise<void> {
    await manager.query(`DELETE FROM campaign_phone_numbers WHERE campaign_id = $1`, [id]);
    await manager.query(
      `INSERT INTO campaign_phone_numbers (campaign_id, phone_number_id, position)
       SELECT $1, number_id, min(position) FROM unnest($2::int[]) WITH ORDINALITY AS item(number_id, position)
       GROUP BY number_id`,
      [id, numbers],
    );
  }
}
