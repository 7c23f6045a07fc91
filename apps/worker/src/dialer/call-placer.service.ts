import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { CallIngestion } from '@app/calls';
import { DiallingRepository, type TakenCallRow } from '@app/database';
import { type CallJob, FailureReasons, HandlesJob, type JobFailed, jobFailed, Jobs } from '@app/jobs';
import { CALL_DIALER, CallDialError, CallDialer, DialRequest, noOutboundTrunk } from '@app/telephony';
import { JobMetrics } from '../job-metrics';

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
    private readonly dialling: DiallingRepository,
    @Inject(CALL_DIALER) private readonly dialer: CallDialer,
    private readonly ingestion: CallIngestion,
    private readonly config: AppConfig,
    private readonly metrics: JobMetrics,
  ) {}

  @HandlesJob(Jobs.placeCall)
  async place({ callId }: CallJob): Promise<{ status: 'dialed' | 'skipped' } | JobFailed> {
    const call = await this.dialling.takeById(callId, this.config.dialLeaseSeconds);
    if (!call) return { status: 'skipped' };
    if (call.assistant_id === null) {
      // The assistant was deleted between the claim and the dial: nobody can take the call.
      await this.dialling.failWithoutAssistant(call);
      return jobFailed(FailureReasons.assistantGone);
    }
    if (!call.outbound_trunk_id) {
      // A number bought from a carrier that no operator gave an outbound trunk (or whose trunk was taken away since
      // the call was written): refused before any provider is asked, whichever dialer is configured.
      this.metrics.callDialled('failed');
      await this.fail(call, noOutboundTrunk(call.assistant_phone_number));
      return jobFailed(FailureReasons.noOutboundTrunk);
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
      return jobFailed(FailureReasons.providerRefused);
    }
    this.metrics.callDialled('dialled');
    await this.dialling.markDialed(call.id);
    return { status: 'dialed' };
  }

  private async fail(call: TakenCallRow, reason: string): Promise<void> {
    this.logger.warn({ callId: call.id, reason }, 'the dialer could not place the call');
    await this.dialling.markDialFailed(call.id);
    await this.ingestion.write(call.external_id, {
      assistant_id: call.assistant_id!,
      type: 'outbound',
      status: 'failed',
      client_phone_number: call.client_phone_number,
      assistant_phone_number: call.assistant_phone_number,
      evaluation: { reason },
    });
  }
}
