import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import {
  callStatusRank,
  CallRow,
  DomainError,
  Errors,
  IngestCallRequest,
  IngestCallResponse,
  TERMINAL_CALL_STATUSES,
  toCallResponse,
  ValidationFailed,
} from '@app/contracts';
import {
  type CallBeforeWrite,
  CallsRepository,
  type CallWrite,
  isForeignKeyViolation,
  isTransientConflict,
  noteAccountWrite,
} from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';

const statusConflict = (from: string, to: string) =>
  new DomainError('call_status_conflict', 409, { message: `The call is already ${from}; it cannot become ${to}.` });

/** Reads of a call that another write changed before this one could apply; past them the runtime gets a 409. */
const WRITE_ATTEMPTS = 5;

interface Written {
  row: CallRow;
  /** The call's account. */
  userId: number;
  created: boolean;
  deliver: boolean;
  freedCampaignSlot: boolean;
}

/**
 * The voice runtime's record of a call, written by external id: the first write creates it (201), later writes
 * update it (200). The owner is the assistant's account. A status only moves forward; the first final status
 * settles the call's lead and, when the assistant's webhook is on, queues the signed delivery.
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
    private readonly calls: CallsRepository,
    private readonly jobs: JobQueue,
  ) {}

  /** Writes the call; answers the route's body, and the row as written for callers that go on with it. */
  async write(
    externalId: string,
    request: IngestCallRequest,
  ): Promise<{ created: boolean; body: IngestCallResponse; row: CallRow }> {
    const outcome = await this.writeWhenUnchanged(externalId, request);
    // The runtime writes for the call's account: that account's next reads must find it (read-your-writes).
    noteAccountWrite(outcome.userId);
    // Queued after the commit. If Redis refuses, the runtime gets a 503 and its retry of the write queues it.
    if (outcome.deliver) await this.jobs.enqueue(Jobs.deliverCallWebhook, { callId: outcome.row.id });
    if (outcome.freedCampaignSlot) await this.dialNext(outcome.row.campaign_id!);
    return {
      created: outcome.created,
      body: { message: outcome.created ? 'Call recorded.' : 'Call updated.', data: toCallResponse(outcome.row) },
      row: outcome.row,
    };
  }

  private async writeWhenUnchanged(externalId: string, request: IngestCallRequest): Promise<Written> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      try {
        const written = await (attempt === 1
          ? this.attempt(this.calls, externalId, request)
          : this.attemptLocked(externalId, request));
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
  private attemptLocked(externalId: string, request: IngestCallRequest): Promise<Written | undefined> {
    return this.calls.transaction(async (calls) => {
      await calls.lockByExternalId(externalId);
      return this.attempt(calls, externalId, request);
    });
  }

  /**
   * One read, decide, write; undefined when the call changed (or appeared) after it was read. Outside a
   * transaction, the write and the lead's move get one of their own when there is a lead to move.
   */
  private async attempt(
    calls: CallsRepository,
    externalId: string,
    request: IngestCallRequest,
  ): Promise<Written | undefined> {
    const seen = await calls.readBeforeWriteByExternalId(
      externalId,
      request.assistant_id,
      request.campaign_id ?? null,
      request.lead_id ?? null,
    );
    if (!seen) throw ValidationFailed.field('assistant_id', 'The selected assistant id is invalid.');
    const errors: Record<string, string[]> = {};
    if (request.campaign_id != null && !seen.campaign_found)
      errors.campaign_id = ['The selected campaign id is invalid.'];
    if (request.lead_id != null && !seen.lead_found) errors.lead_id = ['The selected lead id is invalid.'];
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);

    const exists = seen.call_version !== null;
    // A call's account never changes: an assistant of another account cannot take it over, with its transcript.
    if (exists && seen.call_user_id !== seen.user_id) throw Errors.callOfAnotherAccount();
    const terminal = TERMINAL_CALL_STATUSES.includes(request.status);
    const wasTerminal = exists && TERMINAL_CALL_STATUSES.includes(seen.call_status!);
    if (wasTerminal && seen.call_status !== request.status) throw statusConflict(seen.call_status!, request.status);
    if (exists && !wasTerminal && callStatusRank(request.status) < callStatusRank(seen.call_status!)) {
      throw statusConflict(seen.call_status!, request.status);
    }
    const newlyEnded = terminal && !wasTerminal;
    const leadId = request.lead_id ?? seen.call_lead_id;
    const movesLead = leadId !== null && (newlyEnded || !terminal);

    const write = this.decide(request, seen, terminal, newlyEnded);
    const apply = async (writer: CallsRepository) => {
      const written = exists
        ? await writer.updateByExternalIdIfUnchanged(externalId, seen.call_version!, write)
        : await writer.insertByExternalIdIfAbsent(externalId, write);
      if (written && movesLead) await this.moveLead(writer, written, newlyEnded);
      return written;
    };
    const row = await (movesLead && !calls.inTransaction ? this.calls.transaction(apply) : apply(calls));
    if (!row) return undefined;

    // Until a delivery has answered, repeating the final write queues it again (the job id keeps it single).
    const undelivered = !('status' in (row.webhook_response ?? {}));
    return {
      row,
      userId: seen.user_id,
      created: !exists,
      deliver: terminal && undelivered && Boolean(seen.webhook_url) && seen.is_webhook_active,
      // A campaign call that ended frees one of its parallel slots: its next lead can be dialled at once.
      freedCampaignSlot: newlyEnded && row.campaign_id !== null,
    };
  }

  /**
   * What the write sets: the assistant's fields and the request's, a recording's URL only for an assistant that
   * records; and, for a final write that sends no transcript, the call's transcript turns, joined.
   */
  private decide(request: IngestCallRequest, seen: CallBeforeWrite, terminal: boolean, newlyEnded: boolean): CallWrite {
    return {
      replaced: {
        user_id: seen.user_id,
        assistant_id: seen.id,
        assistant_name: seen.name,
        type: request.type,
        status: request.status,
        client_phone_number: request.client_phone_number,
        assistant_phone_number: request.assistant_phone_number,
      },
      given: {
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
        recording_url: seen.record ? request.recording_url : null,
      },
      transcriptOfTurns: request.transcript === undefined && terminal,
      ending: this.ending(newlyEnded, seen),
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
      webhook_due: newlyEnded && Boolean(seen.webhook_url) && seen.is_webhook_active,
    };
  }

  private async moveLead(calls: CallsRepository, call: CallRow, newlyEnded: boolean): Promise<void> {
    if (newlyEnded) await calls.settleLeadOfEndedCall(call);
    else await calls.markLeadInCall(call);
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
