import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { CallIngestion } from '@app/calls';
import { settleLeadOfEndedCall } from '@app/database';
import { CALL_DIALER, CallDialError, CallDialer, DialRequest } from '@app/telephony';
import { JobMetrics } from '../job-metrics';

interface TakenCall {
  id: number;
  external_id: string;
  assistant_id: number | null;
  campaign_id: number | null;
  lead_id: number | null;
  secondary_contact_id: number | null;
  client_phone_number: string;
  assistant_phone_number: string;
  variables: Record<string, unknown>;
  outbound_trunk_id: string | null;
  previous_state: string;
}

/**
 * Places one claimed call. Taking the call moves its dial from `pending` to `dialing` atomically, so two jobs
 * for one call (a re-queue by the sweep, a retry) never both dial; a `dialing` one is only taken again once its
 * lease ran out (its worker died mid-dial), and then as a resumed attempt, which the dialer checks with the
 * provider before placing it. A dial the provider refuses ends the call `failed` through the ingestion service,
 * exactly as the runtime would report it: one try of the lead's budget is spent, and the webhook fires.
 */
@Injectable()
export class CallPlacer {
  private readonly logger = new Logger(CallPlacer.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CALL_DIALER) private readonly dialer: CallDialer,
    private readonly ingestion: CallIngestion,
    private readonly config: AppConfig,
    private readonly metrics: JobMetrics,
  ) {}

  async place(callId: number): Promise<{ status: 'dialed' | 'failed' | 'skipped' }> {
    const call = await this.take(callId);
    if (!call) return { status: 'skipped' };
    if (call.assistant_id === null) {
      await this.failWithoutAssistant(call);
      return { status: 'failed' };
    }
    const request: DialRequest = {
      attemptId: call.external_id,
      callId: call.id,
      assistantId: call.assistant_id,
      to: call.client_phone_number,
      from: call.assistant_phone_number,
      outboundTrunkId: call.outbound_trunk_id,
      metadata: {
        external_id: call.external_id,
        call_id: call.id,
        assistant_id: call.assistant_id,
        campaign_id: call.campaign_id,
        lead_id: call.lead_id,
        variables: call.variables,
      },
      resumed: call.previous_state === 'dialing',
    };
    try {
      await this.dialer.dial(request);
    } catch (error) {
      if (!(error instanceof CallDialError)) throw error;
      this.metrics.callDialled('failed');
      await this.fail(call, error.message);
      return { status: 'failed' };
    }
    this.metrics.callDialled('dialled');
    await this.dataSource.query(`UPDATE calls SET dial_state = 'dialed' WHERE id = $1 AND dial_state = 'dialing'`, [
      call.id,
    ]);
    return { status: 'dialed' };
  }

  private async take(callId: number): Promise<TakenCall | undefined> {
    const [rows] = (await this.dataSource.query(
      `WITH before AS (SELECT id, dial_state FROM calls WHERE id = $1 FOR UPDATE)
       UPDATE calls c SET dial_state = 'dialing', dial_started_at = now()
         FROM before
        WHERE c.id = before.id AND c.status = 'initiated'
          AND (before.dial_state = 'pending'
               OR (before.dial_state = 'dialing' AND c.dial_started_at < now() - make_interval(secs => $2)))
        RETURNING c.id, c.external_id, c.assistant_id, c.campaign_id, c.lead_id, c.secondary_contact_id,
                  c.client_phone_number, c.assistant_phone_number, c.variables, before.dial_state AS previous_state,
                  (SELECT outbound_trunk_id FROM sip_trunks WHERE phone_number_id = c.phone_number_id) AS outbound_trunk_id`,
      [callId, this.config.dialLeaseSeconds],
    )) as [TakenCall[], number];
    return rows[0];
  }

  private async fail(call: TakenCall, reason: string): Promise<void> {
    this.logger.warn({ callId: call.id, reason }, 'the dialer could not place the call');
    await this.dataSource.query(`UPDATE calls SET dial_state = 'failed' WHERE id = $1`, [call.id]);
    await this.ingestion.write(call.external_id, {
      assistant_id: call.assistant_id!,
      type: 'outbound',
      status: 'failed',
      client_phone_number: call.client_phone_number,
      assistant_phone_number: call.assistant_phone_number,
      evaluation: { reason },
    });
  }

  /** The assistant was deleted between the claim and the dial: nobody can take the call. */
  private async failWithoutAssistant(call: TakenCall): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE calls SET status = 'failed', dial_state = 'failed', ended_at = now(), updated_at = now(),
                evaluation = evaluation || jsonb_build_object('reason', 'The assistant was deleted before the call was placed.')
          WHERE id = $1`,
        [call.id],
      );
      await settleLeadOfEndedCall(manager, { ...call, status: 'failed', answered_by: null });
    });
  }
}
