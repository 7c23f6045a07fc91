import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  callStatusRank,
  DomainError,
  IngestCallRequest,
  IngestCallResponse,
  TERMINAL_CALL_STATUSES,
  ValidationFailed,
  CallRow,
  toCallResponse,
} from '@app/contracts';
import { markLeadInCall, retryingTransaction, settleLeadOfEndedCall } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';

const statusConflict = (from: string, to: string) =>
  new DomainError('call_status_conflict', 409, { message: `The call is already ${from}; it cannot become ${to}.` });

/**
 * The voice runtime's record of a call, written by external id: the first write creates it (201), later writes
 * update it (200). The owner is the assistant's account. A status only moves forward; the first final status
 * settles the call's lead and, when the assistant's webhook is on, queues the signed delivery.
 */
@Injectable()
export class CallIngestion {
  private readonly logger = new Logger(CallIngestion.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: JobQueue,
  ) {}

  async write(externalId: string, request: IngestCallRequest): Promise<{ created: boolean; body: IngestCallResponse }> {
    const outcome = await retryingTransaction(this.dataSource, async (manager) => {
      // The referenced rows are locked (assistant, campaign, lead, then the call: the order of their deletes), so
      // that none can be deleted before the call referencing it is written.
      const [assistant] = await manager.query(
        `SELECT id, user_id, name, webhook_url, is_webhook_active FROM assistants WHERE id = $1 FOR KEY SHARE`,
        [request.assistant_id],
      );
      if (!assistant) throw ValidationFailed.field('assistant_id', 'The selected assistant id is invalid.');
      const errors: Record<string, string[]> = {};
      let campaignName: string | null = null;
      if (request.campaign_id !== undefined && request.campaign_id !== null) {
        const [campaign] = await manager.query(
          `SELECT name FROM campaigns WHERE id = $1 AND user_id = $2 FOR KEY SHARE`,
          [request.campaign_id, assistant.user_id],
        );
        if (!campaign) errors.campaign_id = ['The selected campaign id is invalid.'];
        campaignName = campaign?.name ?? null;
      }
      if (request.lead_id !== undefined && request.lead_id !== null) {
        const [lead] = await manager.query(`SELECT id FROM leads WHERE id = $1 AND user_id = $2 FOR KEY SHARE`, [
          request.lead_id,
          assistant.user_id,
        ]);
        if (!lead) errors.lead_id = ['The selected lead id is invalid.'];
      }
      if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);

      const [existing] = (await manager.query(`SELECT * FROM calls WHERE external_id = $1 FOR UPDATE`, [
        externalId,
      ])) as CallRow[] & { user_id: number }[];
      const terminal = TERMINAL_CALL_STATUSES.includes(request.status);
      if (existing) {
        const wasTerminal = TERMINAL_CALL_STATUSES.includes(existing.status);
        if (wasTerminal && existing.status !== request.status) throw statusConflict(existing.status, request.status);
        if (!wasTerminal && callStatusRank(request.status) < callStatusRank(existing.status)) {
          throw statusConflict(existing.status, request.status);
        }
      }
      const values = {
        user_id: assistant.user_id,
        assistant_id: assistant.id,
        assistant_name: assistant.name,
        campaign_id: request.campaign_id ?? existing?.campaign_id ?? null,
        campaign_name: campaignName ?? existing?.campaign_name ?? null,
        lead_id: request.lead_id ?? existing?.lead_id ?? null,
        type: request.type,
        status: request.status,
        client_phone_number: request.client_phone_number,
        assistant_phone_number: request.assistant_phone_number,
        duration: request.duration ?? existing?.duration ?? 0,
        transcript: request.transcript ?? existing?.transcript ?? '',
        variables: JSON.stringify(request.variables ?? existing?.variables ?? {}),
        evaluation: JSON.stringify(request.evaluation ?? existing?.evaluation ?? {}),
        carrier_cost: request.carrier_cost ?? existing?.carrier_cost ?? 0,
        total_cost: request.total_cost ?? existing?.total_cost ?? 0,
        answered_by: request.answered_by ?? existing?.answered_by ?? null,
        recording_url: request.recording_url ?? existing?.recording_url ?? null,
      };
      const columns = Object.keys(values);
      const newlyEnded = terminal && !(existing && TERMINAL_CALL_STATUSES.includes(existing.status));
      const [row] = (await manager.query(
        `INSERT INTO calls (external_id, ${columns.join(', ')}, webhook_event_id, ended_at)
         VALUES ($1, ${columns.map((_, index) => `$${index + 2}`).join(', ')}, $${columns.length + 2}, $${columns.length + 3})
         ON CONFLICT (external_id) DO UPDATE SET ${columns.map((column) => `${column} = EXCLUDED.${column}`).join(', ')},
           webhook_event_id = COALESCE(calls.webhook_event_id, EXCLUDED.webhook_event_id),
           ended_at = COALESCE(calls.ended_at, EXCLUDED.ended_at), updated_at = now()
         RETURNING *`,
        [
          externalId,
          ...Object.values(values),
          newlyEnded ? `msg_${randomUUID()}` : null,
          newlyEnded ? new Date() : null,
        ],
      )) as CallRow[];
      if (newlyEnded) await settleLeadOfEndedCall(manager, row);
      else if (!terminal) await markLeadInCall(manager, row);
      // Until a delivery has answered, repeating the final write queues it again (the job id keeps it single).
      const undelivered = !('status' in (row.webhook_response ?? {}));
      const deliver = terminal && undelivered && Boolean(assistant.webhook_url) && assistant.is_webhook_active;
      // A campaign call that ended frees one of its parallel slots: its next lead can be dialled at once.
      const freedCampaignSlot = newlyEnded && row.campaign_id !== null;
      return { row, created: !existing, deliver, freedCampaignSlot };
    });
    // Queued after the commit. If Redis refuses, the runtime gets a 503 and its retry of the write queues it.
    if (outcome.deliver) await this.jobs.enqueue(Jobs.deliverCallWebhook, { callId: outcome.row.id });
    if (outcome.freedCampaignSlot) await this.dialNext(outcome.row.campaign_id!);
    return {
      created: outcome.created,
      body: { message: outcome.created ? 'Call recorded.' : 'Call updated.', data: toCallResponse(outcome.row) },
    };
  }

  /** Best effort: the dialer's periodic look finds the campaign anyway when Redis refuses this one. */
  private async dialNext(campaignId: number): Promise<void> {
    try {
      await this.jobs.enqueue(Jobs.dialCampaign, { campaignId });
    } catch (error) {
      this.logger.warn({ campaignId, error: (error as Error).message }, 'could not queue the campaign’s next dial');
    }
  }
}
