import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import {
  type AssistantRequestOutcome,
  callStatusRank,
  CallRow,
  countryOfNumber,
  DomainError,
  Errors,
  FIRST_WRITE_FIELDS,
  IngestCallRequest,
  IngestCallResponse,
  reportedNumber,
  TERMINAL_CALL_STATUSES,
  toCallResponse,
  ValidationFailed,
} from '@app/contracts';
import {
  type CallBeforeWrite,
  CallLimitReached,
  type CallWrite,
  CallWritesRepository,
  isForeignKeyViolation,
  isTransientConflict,
  Transactions,
} from '@app/database';
import { JobQueue, Jobs, LiveSignals } from '@app/jobs';

const statusConflict = (from: string, to: string) =>
  new DomainError('call_status_conflict', 409, { message: `The call is already ${from}; it cannot become ${to}.` });

/** Reads of a call that another write changed before this one could apply; past them the runtime gets a 409. */
const WRITE_ATTEMPTS = 5;

/** Who writes for the voice runtime: the deployment's RUNTIME_API_TOKEN, or the call token a session handed out. */
export type RuntimeCredential = 'runtime-token' | 'call-token';

/**
 * A session's first write of an inbound call whose number has a ring-time hook: the call is written with the hook's
 * pending mark, or, when a racing session wrote it first, left as that session wrote it (the row as it is), so
 * that a second session never undoes what the hook's answer set.
 */
export interface FirstWrite {
  assistantRequest: AssistantRequestOutcome;
}

/**
 * Whether a write that creates a call in progress must find its account a free call slot (a session: a new call
 * starting), or records one whatever the count (the runtime's own report of a call it already runs).
 */
export type NewCallSlot = 'within-account-limit' | 'unchecked';

const PHONE_NUMBER_FIELDS: readonly string[] = ['client_phone_number', 'assistant_phone_number'];

/** What a call token can never change of its call. */
const CALL_OWNERSHIP = ['assistant_id', 'campaign_id', 'lead_id'] as const;
const OWNERSHIP_OF_CALL = {
  assistant_id: 'call_assistant_id',
  campaign_id: 'call_campaign_id',
  lead_id: 'call_lead_id',
} as const satisfies Record<(typeof CALL_OWNERSHIP)[number], keyof CallBeforeWrite>;

interface Written {
  row: CallRow;
  created: boolean;
  deliver: boolean;
  /** The call's analysis is pending: its job is queued (again; its id keeps it single). */
  analyse: boolean;
  freedCampaignSlot: boolean;
  /** The call ended while a campaign of its account waited for a call slot: the account's campaigns look again. */
  freedWaitedSlot: boolean;
}

/**
 * The voice runtime's record of a call, written by external id: the first write creates it (201) from everything
 * that makes a call, later writes update what they give (200). The owner is the assistant's account. A status only
 * moves forward; the first final status settles the call's lead and, when the assistant's webhook is on, queues the
 * signed delivery; with a model provider configured it also requests the call's analysis (queued when there is a
 * transcript to analyse). A call token never changes its call's assistant, campaign or lead (422), and after the call's
 * final status it may only repeat a write that changes nothing (anything else is 401, as a wrong token is).
 *
 * A write reads everything it decides on in one statement, decides, and then writes only if the call is still
 * as read (its row version unchanged, or still absent); otherwise it reads again. A call without a lead is so
 * written in two round trips and no transaction, which is what lets ingestion keep up with many calls at once;
 * a call with a lead moves the lead in the same transaction as the call. Referenced rows deleted in between make
 * the write fail on its foreign keys, and the next read answers as if they had been missing from the start.
 */
@Injectable()
export class CallIngestion {
  private readonly logger = new Logger(CallIngestion.name);

  constructor(
    private readonly calls: CallWritesRepository,
    private readonly transactions: Transactions,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
    private readonly signals: LiveSignals,
  ) {}

  /** Writes the call; answers the route's body, and the row as written for callers that go on with it. */
  async write(
    externalId: string,
    request: IngestCallRequest,
    credential: RuntimeCredential = 'runtime-token',
    firstWrite?: FirstWrite,
    newCallSlot: NewCallSlot = 'unchecked',
  ): Promise<{ created: boolean; body: IngestCallResponse; row: CallRow }> {
    // The repository notes the call's account as written: its next reads find the write (read-your-writes).
    const outcome = await this.writeWhenUnchanged(externalId, request, credential, firstWrite, newCallSlot);
    // Queued after the commit. If Redis refuses, the runtime gets a 503 and its retry of the write queues it.
    if (outcome.deliver) await this.jobs.enqueue(Jobs.deliverCallWebhook, { callId: outcome.row.id });
    if (outcome.analyse)
      await this.jobs.enqueue(Jobs.analyzeCall, { callId: outcome.row.id, run: outcome.row.analysis_run });
    if (outcome.freedCampaignSlot) await this.dialNext(outcome.row.campaign_id!);
    if (outcome.freedWaitedSlot) await this.dialWaiting(outcome.row.user_id, outcome.row.campaign_id);
    // A finished call's streams (the owner's view, the runtime's control) end: they are told to look. A call written
    // finished in its first write had no stream to tell (a stream follows a call that exists).
    if (TERMINAL_CALL_STATUSES.includes(outcome.row.status) && !outcome.created)
      await this.signals.publish({ callId: outcome.row.id, fromId: 0 });
    return {
      created: outcome.created,
      body: { message: outcome.created ? 'Call recorded.' : 'Call updated.', data: toCallResponse(outcome.row) },
      row: outcome.row,
    };
  }

  private async writeWhenUnchanged(
    externalId: string,
    request: IngestCallRequest,
    credential: RuntimeCredential,
    firstWrite: FirstWrite | undefined,
    newCallSlot: NewCallSlot,
  ): Promise<Written> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      try {
        const written = await (attempt === 1
          ? this.attempt(this.calls, externalId, request, credential, firstWrite, newCallSlot)
          : this.attemptLocked(externalId, request, credential, firstWrite, newCallSlot));
        if (written) return written;
      } catch (error) {
        if (!isTransientConflict(error) && !isForeignKeyViolation(error)) throw error;
      }
    }
    throw Errors.conflict();
  }

  /**
   * After a lost race the writes of one call take turns: the call's row stays locked for the whole attempt, so
   * a burst of writes to one call all land instead of each reading a version another has just replaced.
   */
  private attemptLocked(
    externalId: string,
    request: IngestCallRequest,
    credential: RuntimeCredential,
    firstWrite: FirstWrite | undefined,
    newCallSlot: NewCallSlot,
  ): Promise<Written | undefined> {
    return this.transactions.run(async (transaction) => {
      const calls = this.calls.within(transaction);
      await calls.lockByExternalId(externalId);
      return this.attempt(calls, externalId, request, credential, firstWrite, newCallSlot);
    });
  }

  /**
   * One read, decide, write; undefined when the call changed (or appeared) after it was read. Outside a
   * transaction, the write and the lead's move get one of their own when there is a lead to move.
   */
  private async attempt(
    calls: CallWritesRepository,
    externalId: string,
    request: IngestCallRequest,
    credential: RuntimeCredential,
    firstWrite: FirstWrite | undefined,
    newCallSlot: NewCallSlot,
  ): Promise<Written | undefined> {
    const seen = await calls.readBeforeWriteByExternalId(
      externalId,
      request.assistant_id ?? null,
      request.campaign_id ?? null,
      request.lead_id ?? null,
    );
    const exists = seen.call_version !== null;
    if (exists && firstWrite) {
      const row = await calls.findByExternalId(externalId);
      return (
        row && { row, created: false, deliver: false, analyse: false, freedCampaignSlot: false, freedWaitedSlot: false }
      );
    }
    const wasTerminal = exists && TERMINAL_CALL_STATUSES.includes(seen.call_status!);
    if (wasTerminal && credential === 'call-token') return this.repeatOfFinalWrite(calls, externalId, request, seen);
    if (!exists) requireFirstWriteFields(request);
    const errors: Record<string, string[]> = {};
    if (request.assistant_id != null && seen.id === null)
      errors.assistant_id = ['The selected assistant id is invalid.'];
    if (request.campaign_id != null && !seen.campaign_found)
      errors.campaign_id = ['The selected campaign id is invalid.'];
    if (request.lead_id != null && !seen.lead_found) errors.lead_id = ['The selected lead id is invalid.'];
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);

    // A call's account never changes: an assistant of another account cannot take it over, with its transcript.
    if (exists && seen.id !== null && seen.call_user_id !== seen.user_id) throw Errors.callOfAnotherAccount();
    const status = request.status ?? seen.call_status!;
    const terminal = TERMINAL_CALL_STATUSES.includes(status);
    if (exists && credential === 'call-token') {
      const moved = movedOwnership(request, seen);
      if (moved.length > 0) {
        throw new ValidationFailed(
          Object.fromEntries(moved.map((field) => [field, [`The ${field.replace(/_/g, ' ')} cannot change.`]])),
        );
      }
    }
    if (wasTerminal && seen.call_status !== status) throw statusConflict(seen.call_status!, status);
    if (exists && !wasTerminal && callStatusRank(status) < callStatusRank(seen.call_status!)) {
      throw statusConflict(seen.call_status!, status);
    }
    const newlyEnded = terminal && !wasTerminal;
    const leadId = request.lead_id ?? seen.call_lead_id;
    const movesLead = leadId !== null && (newlyEnded || !terminal);

    const write = { ...this.decide(request, seen, status, newlyEnded), assistantRequest: firstWrite?.assistantRequest };
    // A new call in progress takes one of its account's call slots, in the statement that writes it.
    const callLimit =
      newCallSlot === 'within-account-limit' && !terminal ? this.config.accountMaxConcurrentCalls : undefined;
    const apply = async (writer: CallWritesRepository) => {
      const written = exists
        ? await writer.updateByExternalIdIfUnchanged(externalId, seen.call_version!, write)
        : await writer.insertByExternalIdIfAbsent(externalId, write, callLimit);
      if (written && !(written instanceof CallLimitReached) && movesLead)
        await this.moveLead(writer, written, newlyEnded);
      return written;
    };
    const row = await (movesLead && !calls.inTransaction
      ? this.transactions.run((transaction) => apply(this.calls.within(transaction)))
      : apply(calls));
    if (row instanceof CallLimitReached) {
      // The last slot may have gone to a racing session of this very call: then it is that call, read again.
      if (await calls.findByExternalId(externalId)) return undefined;
      throw Errors.callLimitReached(row.maxConcurrentCalls);
    }
    if (!row) return undefined;
    return {
      row,
      created: !exists,
      deliver: terminal && deliveryOwed(row, seen),
      analyse: terminal && analysisPending(row),
      // A campaign call that ended frees one of its parallel slots: its next lead can be dialled at once.
      freedCampaignSlot: newlyEnded && row.campaign_id !== null,
      // Read before the write: a claim that marks the account after that read is served by the periodic look.
      freedWaitedSlot: newlyEnded && seen.account_campaigns_waiting === true,
    };
  }

  /**
   * A call token's write after its call's final status: the call as it is when the write would change nothing of
   * it (nothing is written; a delivery still owed is queued again, as a repeated final write queues it), else 401.
   */
  private async repeatOfFinalWrite(
    calls: CallWritesRepository,
    externalId: string,
    request: IngestCallRequest,
    seen: CallBeforeWrite,
  ): Promise<Written | undefined> {
    if (movedOwnership(request, seen).length > 0) throw Errors.unauthenticated();
    const write = this.decide(request, seen, request.status ?? seen.call_status!, false);
    const found = await calls.compareWriteByExternalId(externalId, seen.call_version!, write);
    if (!found) return undefined;
    if (!found.unchanged) throw Errors.unauthenticated();
    return {
      row: found.row,
      created: false,
      deliver: deliveryOwed(found.row, seen),
      analyse: analysisPending(found.row),
      freedCampaignSlot: false,
      freedWaitedSlot: false,
    };
  }

  /**
   * What the write sets: the assistant's fields and the request's (numbers in E.164 when they read as numbers, a
   * national one in the country of the call's own number), a recording's URL only for an assistant that records;
   * and, for a final write that sends no transcript (or null), the call's transcript turns, joined.
   */
  private decide(request: IngestCallRequest, seen: CallBeforeWrite, status: string, newlyEnded: boolean): CallWrite {
    const own = request.assistant_phone_number == null ? undefined : reportedNumber(request.assistant_phone_number);
    const country = countryOfNumber(own ?? seen.call_assistant_phone_number ?? '');
    return {
      status,
      assistant: seen.id === null ? undefined : { user_id: seen.user_id!, id: seen.id, name: seen.name! },
      given: {
        type: request.type ?? undefined,
        client_phone_number:
          request.client_phone_number == null ? undefined : reportedNumber(request.client_phone_number, country),
        assistant_phone_number: own,
        campaign_id: request.campaign_id,
        campaign_name: seen.campaign_name,
        lead_id: request.lead_id,
        duration: request.duration,
        transcript: request.transcript,
        variables: request.variables,
        evaluation: request.evaluation,
        carrier_cost: request.carrier_cost,
        total_cost: request.total_cost,
        answered_by: request.answered_by,
        ended_reason: request.ended_reason,
        recording_url: seen.record ? request.recording_url : null,
      },
      transcriptOfTurns: request.transcript == null && TERMINAL_CALL_STATUSES.includes(status),
      ending: this.ending(newlyEnded, seen),
      // Without a model provider a call's analysis stays null: nothing would ever run it.
      analyse: TERMINAL_CALL_STATUSES.includes(status) && this.config.modelProvider !== undefined,
    };
  }

  /**
   * What the first final write sets: the webhook event, the end and, when the assistant's webhook is on, the mark
   * that a delivery is owed (cleared once one succeeds or gives up), by which the worker's sweep finds a delivery
   * whose job was lost.
   */
  private ending(newlyEnded: boolean, seen: CallBeforeWrite): CallWrite['ending'] {
    return {
      webhook_event_id: newlyEnded ? `msg_${randomUUID()}` : null,
      ended_at: newlyEnded ? new Date() : null,
      webhook_due: newlyEnded && webhookOn(seen),
    };
  }

  private async moveLead(calls: CallWritesRepository, call: CallRow, newlyEnded: boolean): Promise<void> {
    if (newlyEnded) await calls.settleLeadOfEndedCall(call);
    else await calls.markLeadInCall(call);
  }

  /**
   * The account's running campaigns, when one waited for a call slot, each looked at again (but `dialled`, queued
   * already). Best effort, as `dialNext`.
   */
  private async dialWaiting(userId: number, dialled: number | null): Promise<void> {
    try {
      for (const campaignId of await this.calls.takeWaitingCampaigns(userId)) {
        if (campaignId !== dialled) await this.jobs.enqueue(Jobs.dialCampaign, { campaignId });
      }
    } catch (error) {
      this.logger.warn({ userId, error: (error as Error).message }, 'could not queue the waiting campaigns’ dials');
    }
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

/**
 * A call the service has not seen is made from what the first write must give: each one missing is named. A web call
 * is between no phone numbers: its numbers are not required.
 */
function requireFirstWriteFields(request: IngestCallRequest): void {
  const missing = FIRST_WRITE_FIELDS.filter(
    (field) => request[field] == null && !(request.type === 'web' && PHONE_NUMBER_FIELDS.includes(field)),
  );
  if (missing.length > 0) {
    throw new ValidationFailed(
      Object.fromEntries(missing.map((field) => [field, [`The ${field.replace(/_/g, ' ')} field is required.`]])),
    );
  }
}

/** The call's assistant, campaign or lead that a write names another of (null or left out names none). */
function movedOwnership(request: IngestCallRequest, seen: CallBeforeWrite): (typeof CALL_OWNERSHIP)[number][] {
  return CALL_OWNERSHIP.filter((field) => request[field] != null && request[field] !== seen[OWNERSHIP_OF_CALL[field]]);
}

function webhookOn(seen: CallBeforeWrite): boolean {
  return Boolean(seen.webhook_url) && seen.is_webhook_active === true;
}

/** Until its job has settled it, a final write (or its repeat) queues the analysis again; the job id keeps it single. */
function analysisPending(row: CallRow): boolean {
  return row.analysis?.status === 'pending';
}

/** Until a delivery has answered, a final write (or its repeat) queues it again; the job id keeps it single. */
function deliveryOwed(row: CallRow, seen: CallBeforeWrite): boolean {
  return !('status' in (row.webhook_response ?? {})) && webhookOn(seen);
}
