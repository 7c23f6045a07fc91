import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
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
  MessageResponse,
  OPEN_LEAD_STATUSES,
  PageQuery,
  toCampaignResponse,
  UpdateCampaignRequest,
  ValidationFailed,
  WEEKDAYS,
  pageOffset,
} from '@app/contracts';
import { CampaignsRepository, Transactions } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import { pageOfList } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

@Injectable()
export class CampaignsService implements OnModuleInit {
  private readonly logger = new Logger(CampaignsService.name);

  constructor(
    private readonly campaigns: CampaignsRepository,
    private readonly transactions: Transactions,
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
    private readonly creates: IdempotentCreates,
  ) {}

  onModuleInit(): void {
    this.creates.recoverWith('campaign', async (user, id) => this.created(await this.read(this.campaigns, user, id)));
  }

  async list(user: AuthenticatedUser, query: PageQuery, request: Request): Promise<LengthAwarePage<CampaignResponse>> {
    const [rows, total] = await this.campaigns.list(user.id, query.per_page, pageOffset(query));
    return pageOfList(rows.map(toCampaignResponse), total, query, request, this.config.appUrl);
  }

  async get(user: AuthenticatedUser, id: number): Promise<CampaignEnvelope> {
    return { data: await this.read(this.campaigns, user, id) };
  }

  async create(user: AuthenticatedUser, request: CreateCampaignRequest): Promise<CampaignMessageEnvelope> {
    const data = await this.transactions.runRetrying(async (transaction) => {
      const campaigns = this.campaigns.within(transaction);
      await this.checkReferences(campaigns, user, request);
      const id = await campaigns.insert(user.id, {
        name: request.name,
        assistant_id: request.assistant_id,
        timezone: request.timezone ?? 'UTC',
        max_calls_in_parallel: request.max_calls_in_parallel ?? 3,
        allowed_hours_start_time: request.allowed_hours_start_time ?? null,
        allowed_hours_end_time: request.allowed_hours_end_time ?? null,
        allowed_days: JSON.stringify(request.allowed_days ?? WEEKDAYS),
        max_retries: request.max_retries ?? 3,
        retry_interval: request.retry_interval ?? 60,
      });
      if (request.phone_number_ids) await campaigns.replaceNumbers(id, request.phone_number_ids);
      await this.creates.record(transaction, 'campaign', id);
      return this.read(campaigns, user, id);
    });
    return this.created(data);
  }

  private created(data: CampaignResponse): CampaignMessageEnvelope {
    return { message: 'Campaign created successfully.', data };
  }

  async update(user: AuthenticatedUser, id: number, request: UpdateCampaignRequest): Promise<CampaignMessageEnvelope> {
    const data = await this.transactions.runRetrying(async (transaction) => {
      const campaigns = this.campaigns.within(transaction);
      await this.read(campaigns, user, id);
      // References first, then the campaign: the order in which an assistant's or a number's delete takes them.
      await this.checkReferences(campaigns, user, request);
      if (!(await campaigns.lock(user.id, id))) throw Errors.campaignNotFound();
      await campaigns.update(user.id, id, {
        name: request.name,
        assistant_id: request.assistant_id,
        timezone: request.timezone,
        max_calls_in_parallel: request.max_calls_in_parallel,
        allowed_hours_start_time: request.allowed_hours_start_time,
        allowed_hours_end_time: request.allowed_hours_end_time,
        allowed_days: request.allowed_days === undefined ? undefined : JSON.stringify(request.allowed_days),
        max_retries: request.max_retries,
        retry_interval: request.retry_interval,
      });
      if (request.phone_number_ids) await campaigns.replaceNumbers(id, request.phone_number_ids);
      return this.read(campaigns, user, id);
    });
    return { message: 'Campaign updated successfully.', data };
  }

  /** Its leads go with it. */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.campaigns.delete(user.id, id))) throw Errors.campaignNotFound();
    return { message: 'Campaign deleted successfully.' };
  }

  async updateStatus(user: AuthenticatedUser, request: CampaignStatusRequest): Promise<CampaignStatusResponse> {
    const status = await this.transactions.run(async (transaction) => {
      const campaigns = this.campaigns.within(transaction);
      const campaign = await campaigns.lockStatus(user.id, request.campaign_id);
      if (!campaign) throw Errors.campaignNotFound();
      const refuse = (message: string) => ValidationFailed.field('campaign_id', message);
      if (request.action === 'stop') {
        if (campaign.status !== 'in-progress') throw refuse('The campaign is not running.');
        await campaigns.stop(campaign.id);
        return 'stopped';
      }
      if (campaign.status === 'in-progress') throw refuse('The campaign is already running.');
      if (campaign.assistant_id === null) throw refuse('The campaign has no assistant: its assistant was deleted.');
      if ((await campaigns.countLeads(campaign.id, OPEN_LEAD_STATUSES)) === 0) {
        throw refuse('The campaign has no leads to call.');
      }
      const numbers = await campaigns.countCallerNumbers(campaign.id, campaign.assistant_id);
      if (numbers.numbers === 0) throw refuse('The campaign has no phone number to call from.');
      if (numbers.callable === 0) {
        throw refuse("The campaign's phone numbers cannot place calls: none has an outbound SIP trunk.");
      }
      await campaigns.start(campaign.id);
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

  private async read(campaigns: CampaignsRepository, user: AuthenticatedUser, id: number): Promise<CampaignResponse> {
    const row = await campaigns.find(user.id, id);
    if (!row) throw Errors.campaignNotFound();
    return toCampaignResponse(row);
  }

  /** The assistant must be an outbound one of the account; caller numbers must be the account's. */
  private async checkReferences(
    campaigns: CampaignsRepository,
    user: AuthenticatedUser,
    request: CreateCampaignRequest | UpdateCampaignRequest,
  ): Promise<void> {
    const errors: Record<string, string[]> = {};
    if (request.assistant_id !== undefined) {
      const type = await campaigns.lockAssistantType(user.id, request.assistant_id);
      if (type === undefined) errors.assistant_id = ['The selected assistant id is invalid.'];
      else if (type !== 'outbound') errors.assistant_id = ['The assistant id field must be an outbound assistant.'];
    }
    if (request.phone_number_ids?.length) {
      const found = await campaigns.lockActiveNumbers(user.id, request.phone_number_ids);
      request.phone_number_ids.forEach((id, index) => {
        if (!found.has(id))
          errors[`phone_number_ids.${index}`] = [
            `The selected ${humaniseAttribute(`phone_number_ids.${index}`)} is invalid.`,
          ];
      });
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
  }
}
