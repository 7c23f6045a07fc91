import { Injectable, Logger } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { AppConfig } from '@app/config';
import { OPEN_CALL_STATUSES, toCallEndedWebhook, toWebhookCall, utcDateTime } from '@app/contracts';
import { SecretBox, SecretContexts, signedWebhookHeaders } from '@app/crypto';
import { CallDeliveriesRepository, type CallDeliveryRow } from '@app/database';
import { CallJob, HandlesJob, isFinalAttempt, JobQueue, Jobs, LIVE_JOB_STATES, LiveSignals } from '@app/jobs';
import { OutboundHttp, OutboundRequestError } from '@app/outbound-http';
import { JobMetrics } from '../job-metrics';

/** The part of the receiver's answer kept in the call's `webhook_response`. */
const RESPONSE_BODY_LIMIT = 4096;
const DELIVERY_TIMEOUT_MS = 10_000;
/** Refusals of the outbound guard that every retry would meet again. */
const UNRETRIABLE_CODES: ReadonlySet<string> = new Set(['blocked_address', 'invalid_url', 'unsupported_protocol']);

@Injectable()
export class CallWebhooks {
  private readonly logger = new Logger(CallWebhooks.name);

  constructor(
    private readonly calls: CallDeliveriesRepository,
    private readonly http: OutboundHttp,
    private readonly secrets: SecretBox,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
    private readonly metrics: JobMetrics,
    private readonly signals: LiveSignals,
  ) {}

  /**
   * POSTs the ended call to its assistant's webhook, signed; the receiver's answer (status and the start of its
   * body) goes into `webhook_response` on every attempt. A network failure, timeout or non-2xx throws, so the job
   * is retried with backoff; `webhook-id` stays the same on every retry of the event. Attempts are counted on the
   * call as well as on the job, so a delivery queued again after its job was lost (`sweepUndelivered`) goes on from
   * the attempts already made, and gives up at the same total.
   */
  @HandlesJob(Jobs.deliverCallWebhook)
  async deliver({ callId }: CallJob, job: Job): Promise<{ status: string }> {
    const call = await this.calls.findDeliveryById(callId);
    if (
      !call ||
      !call.webhook_url ||
      !call.is_webhook_active ||
      !call.webhook_secret_sealed ||
      !call.webhook_event_id
    ) {
      // The webhook was turned off (or the call is gone) since the delivery was queued: nothing is owed any more.
      await this.calls.settleWebhook(callId);
      return { status: 'skipped' };
    }
    const body = JSON.stringify(toCallEndedWebhook(call));
    const recordedAttempts = Number(call.webhook_response?.attempts);
    const attempt = Math.max(job.attemptsMade, Number.isSafeInteger(recordedAttempts) ? recordedAttempts : 0) + 1;
    const lastAttempt = attempt >= (job.opts.attempts ?? 1);
    const sent = await this.send(call, call.webhook_event_id, body);
    const recorded: Record<string, unknown> =
      sent.error === undefined
        ? { status: sent.status, body: sent.body, attempts: attempt, delivered_at: utcDateTime(new Date()) }
        : { status: null, error: sent.error, attempts: attempt, delivered_at: utcDateTime(new Date()) };
    const failure = sent.failure;
    if (failure?.final) {
      await this.calls.recordWebhookResponse(call.id, recorded, true);
      throw new UnrecoverableError(failure.reason);
    }
    // The job's own last attempt is one too: `attempt` is never below the job's count.
    const final = !failure || lastAttempt;
    await this.calls.recordWebhookResponse(call.id, recorded, final);
    if (!failure) return { status: 'delivered' };
    if (!final) throw new Error(`Webhook delivery failed: ${failure.reason}`);
    this.logger.warn({ callId: call.id, attempts: attempt, error: failure.reason }, 'webhook gave up');
    // The job queued again may have retries left of its own; the call's count says there are none.
    throw new UnrecoverableError(`Webhook delivery failed: ${failure.reason}`);
  }

  /**
   * POSTs `call.started` to the assistant's webhook, signed like `call.ended`, once the runtime's session started. The
   * call's `webhook_response` stays the ended event's; this one is settled by clearing what the session marked owed.
   */
  @HandlesJob(Jobs.deliverCallStartedWebhook)
  async deliverStarted({ callId }: CallJob, job: Job): Promise<{ status: string }> {
    const call = await this.calls.findStartedDeliveryById(callId);
    if (!call || !call.webhook_url || !call.is_webhook_active || !call.webhook_secret_sealed) {
      await this.calls.settleStartedWebhook(callId);
      return { status: 'skipped' };
    }
    const body = JSON.stringify({ event: 'call.started', call: toWebhookCall(call) });
    // Named whenever the mark is set (see the API's CallSessions.announce).
    return this.deliverOnce(call, call.started_event_id!, body, job, () => this.calls.settleStartedWebhook(call.id));
  }

  /**
   * POSTs `call.analyzed` to the assistant's webhook, signed like `call.ended`, once the call's analysis settled
   * (done or failed): the call with its `analysis`. The event is the analysis run's, so a re-run's is a new one; a
   * re-run that replaced the run before its delivery leaves nothing owed.
   */
  @HandlesJob(Jobs.deliverCallAnalyzedWebhook)
  async deliverAnalyzed({ callId }: CallJob, job: Job): Promise<{ status: string }> {
    const call = await this.calls.findAnalyzedDeliveryById(callId);
    const eventId = call?.analysis_event_id ?? null;
    if (!call || !call.webhook_url || !call.is_webhook_active || !call.webhook_secret_sealed || !eventId) {
      await this.calls.settleAnalyzedWebhook(callId, eventId);
      return { status: 'skipped' };
    }
    const body = JSON.stringify({ event: 'call.analyzed', call: toWebhookCall(call) });
    return this.deliverOnce(call, eventId, body, job, () => this.calls.settleAnalyzedWebhook(call.id, eventId));
  }

  /**
   * One attempt of an event retried by its job alone: delivered, or refused for good (the guard), or the job's last
   * attempt settles what was owed (`settle`); a failure otherwise throws, for the job's next attempt.
   */
  private async deliverOnce(
    call: CallDeliveryRow,
    eventId: string,
    body: string,
    job: Job,
    settle: () => Promise<void>,
  ): Promise<{ status: string }> {
    const { failure } = await this.send(call, eventId, body);
    if (!failure || failure.final || isFinalAttempt(job)) await settle();
    if (!failure) return { status: 'delivered' };
    if (failure.final) throw new UnrecoverableError(failure.reason);
    throw new Error(`Webhook delivery failed: ${failure.reason}`);
  }

  /**
   * One signed POST of an event's body: the receiver's status and the start of its answer, or why none came; and what
   * went wrong, if anything (`final` when no retry can help: the guard refuses the address).
   */
  private async send(
    call: CallDeliveryRow,
    eventId: string,
    body: string,
  ): Promise<{ status?: number; body?: string; error?: string; failure?: { reason: string; final: boolean } }> {
    const secret = this.secrets.open(call.webhook_secret_sealed!, SecretContexts.webhookSecret(call.assistant_id));
    try {
      const answer = await this.http.client.request(call.webhook_url!, {
        method: 'POST',
        headers: signedWebhookHeaders(secret, eventId, body),
        body,
        timeoutMs: DELIVERY_TIMEOUT_MS,
        maxBytes: RESPONSE_BODY_LIMIT,
        truncateBody: true,
      });
      const delivered = answer.status >= 200 && answer.status < 300;
      return {
        status: answer.status,
        body: answer.body.toString('utf8'),
        ...(delivered ? {} : { failure: { reason: `the receiver answered ${answer.status}`, final: false } }),
      };
    } catch (error) {
      if (!(error instanceof OutboundRequestError)) throw error;
      // An address the guard refuses will be refused on every retry.
      return { error: error.message, failure: { reason: error.message, final: UNRETRIABLE_CODES.has(error.code) } };
    }
  }

  /**
   * Queues again the deliveries still owed whose job is gone: acknowledged by a Redis master that died before its
   * replica had the job (replication is asynchronous), or lost with the queue's data. A delivery whose job is still
   * waiting, running or waiting to retry is left to it; one whose job finished without clearing the mark (a crash
   * in between) is settled by what the job did. Runs twice per WEBHOOK_STUCK_AFTER_SECONDS.
   */
  @HandlesJob(Jobs.sweepUndeliveredWebhooks)
  async sweepUndelivered(): Promise<{ requeued: number }> {
    const owed = await this.calls.owedWebhooks(this.config.webhookStuckAfterSeconds);
    const queue = this.jobs.queue(Jobs.deliverCallWebhook.queue);
    let requeued = 0;
    for (const call of owed) {
      const existing = await queue.getJob(Jobs.deliverCallWebhook.jobId!({ callId: call.id }));
      const state = existing ? await existing.getState() : undefined;
      if (state && LIVE_JOB_STATES.has(state)) continue;
      // A finished job of this call's life settled the delivery; one older than the call's end is another life's
      // (a database restored against the same queues), which `enqueue` replaces.
      if (existing && (state === 'completed' || state === 'failed') && existing.timestamp >= call.ended_at.getTime()) {
        await this.calls.clearWebhookDue(call.id);
        continue;
      }
      await this.jobs.enqueue(Jobs.deliverCallWebhook, { callId: call.id });
      requeued++;
    }
    if (requeued > 0) this.logger.warn({ requeued }, 'requeued webhook deliveries whose job was lost');
    this.metrics.jobsRequeued(Jobs.deliverCallWebhook.name, requeued);
    return { requeued };
  }

  /** Ends calls the runtime never finished, as `failed`, and lets their lead and webhook follow. */
  @HandlesJob(Jobs.reapStaleCalls)
  async reapStale(): Promise<{ ended: number }> {
    const ended = await this.calls.endStale(OPEN_CALL_STATUSES, this.config.callStaleAfterMinutes);
    for (const row of ended) {
      // Its watchers' and its control stream's cue to close, as a final write would give.
      await this.signals.publish({ callId: row.id, fromId: 0 });
      await this.jobs.enqueue(Jobs.deliverCallWebhook, { callId: row.id });
    }
    if (ended.length > 0) this.logger.warn({ ended: ended.length }, 'ended calls the runtime never finished');
    return { ended: ended.length };
  }
}
