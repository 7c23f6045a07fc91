import type { JobsOptions } from 'bullmq';
import type { AppConfig } from '@app/config';

/** Queues, by purpose. Each queue can be consumed by a differently sized pool of workers. */
export const Queues = {
  maintenance: 'maintenance',
  documents: 'documents',
  telephony: 'telephony',
  leads: 'leads',
  calls: 'calls',
  dialer: 'dialer',
  /** Website re-crawls, apart so that many due at once never hold up new uploads. */
  refreshes: 'refreshes',
  /** Post-call analyses: each waits seconds on the model provider, so they never hold up webhook deliveries. */
  analysis: 'analysis',
} as const;

export type QueueName = (typeof Queues)[keyof typeof Queues];

/**
 * A job's name, queue, default options and (as a phantom type) its payload. A job enqueued while handling a
 * request also carries `enqueuedBy: { requestId }` beside its payload, for the logs.
 */
export interface JobDefinition<Payload> {
  readonly name: string;
  readonly queue: QueueName;
  readonly options: JobsOptions;
  /** A deterministic id, so enqueueing the same work twice is a no-op while the first job is known. */
  readonly jobId?: (payload: Payload) => string;
  /**
   * For a job that repeats on its own: the seconds between its runs under a configuration, or undefined where that
   * configuration turns it off. The worker keeps each such schedule registered (MaintenanceSchedule).
   */
  readonly every?: (config: AppConfig) => number | undefined;
  /** Never set; carries the payload type for `enqueue`. */
  readonly payload?: Payload;
}

function defineJob<Payload>(
  queue: QueueName,
  name: string,
  options: JobsOptions = {},
  jobId?: (payload: Payload) => string,
): JobDefinition<Payload> {
  return { name, queue, options, jobId };
}

/** A job the worker runs on a schedule, with no payload. */
function defineScheduledJob(
  queue: QueueName,
  name: string,
  options: JobsOptions,
  every: (config: AppConfig) => number | undefined,
): JobDefinition<Record<string, never>> {
  return { name, queue, options, every };
}

/** Twice per period, so what was lost is found at most one and a half periods after its last sign of life. */
const twicePer = (seconds: number) => Math.max(1, Math.floor(seconds / 2));

const keepHistory: JobsOptions = {
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

/** Retry delays start at JOB_RETRY_DELAY_MS (applied by JobQueue) and double each attempt. */
const retried = (attempts: number): JobsOptions => ({ ...keepHistory, attempts, backoff: { type: 'exponential' } });

export interface CallJob {
  callId: number;
}

/** One run of a call's analysis: the call's end, or a re-run (`calls.analysis_run`). */
export interface CallAnalysisJob {
  callId: number;
  run: number;
}

/** The owner's hang-up of a live call: its `control` event. */
export interface OwnerHangupJob {
  callId: number;
  controlId: number;
}

/** How long the runtime has to end a call its owner hung up before the provider is told to (the room closed). */
export const OWNER_HANGUP_GRACE_MS = 5000;

export interface LeadImportJob {
  importId: number;
}

export interface SipProvisioningJob {
  requestId: number;
}

export interface InboundDispatchJob {
  phoneNumberId: number;
}

export interface CampaignJob {
  campaignId: number;
}

export interface DocumentJob {
  documentId: number;
}

export interface KnowledgebaseJob {
  knowledgebaseId: number;
}

/**
 * The only contract between the API and the worker: payloads carry ids, Postgres carries state.
 * The worker refuses to boot while any job here lacks a handler.
 */
export const Jobs = {
  /** Deletes session and call tokens past their expiry. */
  purgeExpiredSessions: defineScheduledJob(
    Queues.maintenance,
    'purge-expired-sessions',
    retried(3),
    (config) => config.sessionPurgeIntervalSeconds,
  ),
  /** Deletes Idempotency-Key records past their 24 hours. */
  purgeIdempotencyKeys: defineScheduledJob(Queues.maintenance, 'purge-idempotency-keys', retried(3), () => 3600),
  /** Re-enqueues documents stuck in `processing` past their deadline (a crash between write and enqueue). */
  sweepStuckDocuments: defineScheduledJob(
    Queues.maintenance,
    'sweep-stuck-documents',
    retried(3),
    (config) => config.documentSweepIntervalSeconds,
  ),
  /** Fetches or parses one document, splits it into passages and moves its status. */
  processDocument: defineJob<DocumentJob>(
    Queues.documents,
    'process-document',
    retried(4),
    ({ documentId }) => `document-${documentId}`,
  ),
  /** Creates or re-creates a SIP trunk's provider trunks for one request (the API waits for its outcome). */
  provisionSipTrunk: defineJob<SipProvisioningJob>(
    Queues.telephony,
    'provision-sip-trunk',
    { ...keepHistory, attempts: 1 },
    ({ requestId }) => `sip-request-${requestId}`,
  ),
  /**
   * Delivers a call that ended to its assistant's webhook, signed; retried with backoff for about a day (14
   * attempts, the first retry after JOB_RETRY_DELAY_MS, doubling: 5 s up to 11 h, 23 h in all by default).
   */
  deliverCallWebhook: defineJob<CallJob>(
    Queues.calls,
    'deliver-call-webhook',
    retried(14),
    ({ callId }) => `webhook-${callId}`,
  ),
  /**
   * Tells a call's assistant webhook that its voice runtime's session started (`call.started`). Worth little once
   * the call is long over: a few quick retries (5 s up to 40 s), no sweep.
   */
  deliverCallStartedWebhook: defineJob<CallJob>(
    Queues.calls,
    'deliver-call-started-webhook',
    retried(5),
    ({ callId }) => `webhook-started-${callId}`,
  ),
  /**
   * Runs one run of a call's post-call analysis against the model provider and settles it (done, failed or
   * skipped). A provider's outage is waited out: 14 attempts with backoff (5 s doubling, about a day in all by
   * default), kept in the queue across worker restarts; a run another has settled, or a newer run replaced, is left.
   */
  analyzeCall: defineJob<CallAnalysisJob>(
    Queues.analysis,
    'analyze-call',
    retried(14),
    ({ callId, run }) => `analysis-${callId}-${run}`,
  ),
  /**
   * Tells a call's assistant webhook that its analysis settled (`call.analyzed`), signed like `call.ended` and
   * retried as long. One job a call: a delivery queued while another is waiting sends the newest analysis.
   */
  deliverCallAnalyzedWebhook: defineJob<CallJob>(
    Queues.calls,
    'deliver-call-analyzed-webhook',
    retried(14),
    ({ callId }) => `webhook-analyzed-${callId}`,
  ),
  /** Queues again the analyses and `call.analyzed` deliveries still owed whose job was lost. */
  sweepCallAnalyses: defineScheduledJob(Queues.maintenance, 'sweep-call-analyses', retried(3), (config) =>
    config.modelProvider ? twicePer(config.webhookStuckAfterSeconds) : undefined,
  ),
  /** Queues again the webhook deliveries still owed whose job was lost. */
  sweepUndeliveredWebhooks: defineScheduledJob(Queues.maintenance, 'sweep-undelivered-webhooks', retried(3), (config) =>
    twicePer(config.webhookStuckAfterSeconds),
  ),
  /** Ends calls the runtime never finished (`failed`), so each reaches a final state and its webhook fires. */
  reapStaleCalls: defineScheduledJob(Queues.maintenance, 'reap-stale-calls', retried(3), () => 60),
  /** Re-enqueues lead imports whose job was lost or given up as stalled; they resume where they stopped. */
  sweepStuckImports: defineScheduledJob(Queues.maintenance, 'sweep-stuck-imports', retried(3), (config) =>
    twicePer(config.importStuckAfterSeconds),
  ),
  /** Removes calls older than CALL_RETENTION_DAYS, in small batches; off without a retention. */
  purgeOldCalls: defineScheduledJob(Queues.maintenance, 'purge-old-calls', retried(3), (config) =>
    config.callRetentionDays ? 300 : undefined,
  ),
  /** Reads a CSV of leads into a campaign in batches, resuming where it stopped. */
  importLeads: defineJob<LeadImportJob>(
    Queues.leads,
    'import-leads',
    retried(4),
    ({ importId }) => `lead-import-${importId}`,
  ),
  /**
   * Re-cuts, one document at a time, the passages an earlier version of the cutter wrote (PASSAGE_CUT_VERSION);
   * each document's passages are replaced in one transaction, so it stays searchable throughout, and a run stopped
   * anywhere leaves the rest to the next.
   */
  recutPassages: defineScheduledJob(
    Queues.maintenance,
    'recut-passages',
    retried(3),
    (config) => config.documentSweepIntervalSeconds,
  ),
  /**
   * Embeds a document's passages that have no vector of the configured embeddings model (new passages, or another
   * model's), batch after batch, each written as it comes: a run stopped anywhere resumes with what is left, and no
   * passage is embedded twice. A provider's outage is waited out with backoff (5 s doubling, about a day).
   */
  embedDocument: defineJob<DocumentJob>(
    Queues.documents,
    'embed-document',
    retried(14),
    ({ documentId }) => `embed-${documentId}`,
  ),
  /**
   * Queues `embed-document` for documents with passages still to embed: those written before a provider was
   * configured, before the embeddings model changed, or whose job was lost. Off without an embeddings model.
   */
  sweepPassageEmbeddings: defineScheduledJob(Queues.maintenance, 'sweep-passage-embeddings', retried(3), (config) =>
    config.modelProvider?.embeddingsModel ? config.documentSweepIntervalSeconds : undefined,
  ),
  /** Re-indexes a knowledgebase's passages in its language's configuration after the language changed. */
  reindexKnowledgebase: defineJob<KnowledgebaseJob>(Queues.documents, 'reindex-knowledgebase', retried(4)),
  /** Enqueues a refresh of every website document whose refresh is due. */
  enqueueDueRefreshes: defineScheduledJob(
    Queues.maintenance,
    'enqueue-due-refreshes',
    retried(3),
    (config) => config.documentSweepIntervalSeconds,
  ),
  /**
   * Re-crawls a website document, keeping the passages of unchanged pages. Removed once finished (the outcome
   * is on the document), so the same id can refresh it again next time.
   */
  refreshDocument: defineJob<DocumentJob>(
    Queues.refreshes,
    'refresh-document',
    { attempts: 3, backoff: { type: 'exponential' }, removeOnComplete: true, removeOnFail: true },
    ({ documentId }) => `refresh-${documentId}`,
  ),
  /** Deletes provider trunks that were replaced or whose trunk was deleted; repeats until each is gone. */
  cleanUpProviderTrunks: defineScheduledJob(Queues.telephony, 'clean-up-provider-trunks', retried(3), () => 60),
  /**
   * Compares what the telephony provider holds for this deployment with the database: removes orphans it made and
   * gives a stored trunk's number back to its inbound trunk.
   */
  reconcileProviderTrunks: defineScheduledJob(
    Queues.telephony,
    'reconcile-provider-trunks',
    retried(1),
    (config) => config.sipReconcileIntervalSeconds,
  ),
  /** Tells a SIP trunk's dispatch rule which assistant answers its number now (queued when that changes). */
  refreshInboundDispatch: defineJob<InboundDispatchJob>(Queues.telephony, 'refresh-inbound-dispatch', retried(5)),
  /** Looks for running campaigns with leads to dial, and dials nobody settled (their worker died). */
  dialCampaigns: defineScheduledJob(
    Queues.dialer,
    'dial-campaigns',
    retried(3),
    (config) => config.dialerIntervalSeconds,
  ),
  /**
   * Claims a running campaign's due leads up to its parallel limit and queues their dials. Queued on start, by
   * each ended call of the campaign and by `dial-campaigns`; many at once are harmless (claims skip locked rows).
   */
  dialCampaign: defineJob<CampaignJob>(Queues.dialer, 'dial-campaign', {
    attempts: 3,
    backoff: { type: 'exponential' },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600, count: 1000 },
  }),
  /**
   * Enforces the owner's hang-up of a live call the runtime has not ended (queued with OWNER_HANGUP_GRACE_MS of
   * delay): the provider ends the call (LiveKit: its room is deleted) and the call is written `ended`. Retried while
   * the provider fails.
   */
  enforceOwnerHangup: defineJob<OwnerHangupJob>(
    Queues.calls,
    'enforce-owner-hangup',
    retried(5),
    ({ controlId }) => `owner-hangup-${controlId}`,
  ),
  /** Places one claimed call through the dialer; a dial the provider refuses ends the call `failed`. */
  placeCall: defineJob<CallJob>(Queues.dialer, 'place-call', retried(3)),
} as const;

export type PayloadOf<Definition> = Definition extends JobDefinition<infer Payload> ? Payload : never;

export const allJobs = (): JobDefinition<unknown>[] => Object.values(Jobs) as JobDefinition<unknown>[];
