import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
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
  isForeignKeyViolation,
  isTransientConflict,
  markLeadInCall,
  noteAccountWrite,
  settleLeadOfEndedCall,
} from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';

const statusConflict = (from: string, to: string) =>
  new DomainError('call_status_conflict', 409, { message: `The call is already ${from}; it cannot become ${to}.` });

/**
 * A final write that sends no transcript gets the runtime's transcript turns joined in their order, one line a turn
 * (`Assistant: ...`, `Customer: ...`, as the calls' transcripts read); a call without turns keeps what it had.
 */
const TRANSCRIPT_OF_TURNS = `(SELECT string_agg(CASE WHEN turn.data->>'role' = 'assistant' THEN 'Assistant: ' ELSE 'Customer: ' END
                                 || (turn.data->>'text'), E'\n' ORDER BY turn.seq)
     FROM call_events turn WHERE turn.call_id = calls.id AND turn.type = 'transcript')`;

/** Reads of a call that another write changed before this one could apply; past them the runtime gets a 409. */
const WRITE_ATTEMPTS = 5;

/** What one statement reads before a write: the assistant, the references the request names, the call so far. */
interface Seen {
  id: number;
  user_id: number;
  name: string;
  webhook_url: string | null;
  is_webhook_active: boolean;
  /** Whether the assistant records its calls: a recording's URL is kept only then. */
  record: boolean;
  campaign_found: boolean;
  campaign_name: string | null;
  lead_found: boolean;
  /** The call's account, status, lead and row version (`xmin`), when it exists. */
  call_user_id: number | null;
  call_status: string | null;
  call_lead_id: number | null;
  call_version: string | null;
}

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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: JobQueue,
  ) {}

  async write(externalId: string, request: IngestCallRequest): Promise<{ created: boolean; body: IngestCallResponse }> {
    const outcome = await this.writeWhenUnchanged(externalId, request);
    // The runtime writes for the call's account: that account's next reads must find it (read-your-writes).
    noteAccountWrite(outcome.userId);
    // Queued after the commit. If Redis refuses, the runtime gets a 503 and its retry of the write queues it.
    if (outcome.deliver) await this.jobs.enqueue(Jobs.deliverCallWebhook, { callId: outcome.row.id });
    if (outcome.freedCampaignSlot) await this.dialNext(outcome.row.campaign_id!);
    return {
      created: outcome.created,
      body: { message: outcome.created ? 'Call recorded.' : 'Call updated.', data: toCallResponse(outcome.row) },
    };
  }

  private async writeWhenUnchanged(externalId: string, request: IngestCallRequest): Promise<Written> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      try {
        const written = await (attempt === 1
          ? this.attempt(this.dataSource.manager, externalId, request)
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
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT 1 FROM calls WHERE external_id = $1 FOR UPDATE`, [externalId]);
      return this.attempt(manager, externalId, request);
    });
  }

  /**
   * One read, decide, write; undefined when the call changed (or appeared) after it was read. Outside a
   * transaction, the write and the lead's move get one of their own when there is a lead to move.
   */
  private async attempt(
    manager: EntityManager,
    externalId: string,
    request: IngestCallRequest,
  ): Promise<Written | undefined> {
    const [seen] = (await manager.query(
      `SELECT a.id, a.user_id, a.name, a.webhook_url, a.is_webhook_active, a.record,
              campaign.id IS NOT NULL AS campaign_found, campaign.name AS campaign_name,
              lead.id IS NOT NULL AS lead_found,
              call.user_id AS call_user_id, call.status AS call_status, call.lead_id AS call_lead_id,
              call.xmin::text AS call_version
         FROM assistants a
         LEFT JOIN campaigns campaign ON campaign.id = $2::int AND campaign.user_id = a.user_id
         LEFT JOIN leads lead ON lead.id = $3::int AND lead.user_id = a.user_id
         LEFT JOIN calls call ON call.external_id = $4
        WHERE a.id = $1`,
      [request.assistant_id, request.campaign_id ?? null, request.lead_id ?? null, externalId],
    )) as Seen[];
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

    const statement = exists
      ? this.update(externalId, request, seen, newlyEnded)
      : this.insert(externalId, request, seen, newlyEnded);
    const apply = async (writer: EntityManager) => {
      const [written] = (await writer.query(statement.sql, statement.parameters)) as CallRow[];
      if (written && movesLead) await this.moveLead(writer, written, newlyEnded);
      return written;
    };
    const inTransaction = manager.queryRunner?.isTransactionActive === true;
    const row = await (movesLead && !inTransaction ? this.dataSource.transaction(apply) : apply(manager));
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

  /** The call's first write; nothing if a concurrent first write won the race. */
  private insert(externalId: string, request: IngestCallRequest, seen: Seen, newlyEnded: boolean) {
    const values: Record<string, unknown> = {
      ...this.replaced(request, seen),
      campaign_id: request.campaign_id ?? null,
      campaign_name: seen.campaign_name,
      lead_id: request.lead_id ?? null,
      duration: request.duration ?? 0,
      transcript: request.transcript ?? '',
      variables: JSON.stringify(request.variables ?? {}),
      evaluation: JSON.stringify(request.evaluation ?? {}),
      carrier_cost: request.carrier_cost ?? 0,
      total_cost: request.total_cost ?? 0,
      answered_by: request.answered_by ?? null,
      recording_url: seen.record ? (request.recording_url ?? null) : null,
      ...this.ending(newlyEnded, seen),
    };
    const columns = Object.keys(values);
    return {
      sql: `INSERT INTO calls (external_id, ${columns.join(', ')})
            VALUES ($1, ${columns.map((_, index) => `$${index + 2}`).join(', ')})
            ON CONFLICT (external_id) DO NOTHING RETURNING *`,
      parameters: [externalId, ...Object.values(values)],
    };
  }

  /** A later write: fields the request leaves out keep their value; nothing if the call changed since `seen`. */
  private update(externalId: string, request: IngestCallRequest, seen: Seen, newlyEnded: boolean) {
    const parameters: unknown[] = [externalId, seen.call_version];
    const parameter = (value: unknown) => `$${parameters.push(value)}`;
    const keep = (column: string, value: unknown, type: string) =>
      `${column} = COALESCE(${parameter(value ?? null)}::${type}, ${column})`;
    const json = (value: Record<string, unknown> | undefined) => (value == null ? null : JSON.stringify(value));
    const ending = this.ending(newlyEnded, seen);
    const assignments = [
      ...Object.entries(this.replaced(request, seen)).map(([column, value]) => `${column} = ${parameter(value)}`),
      keep('campaign_id', request.campaign_id, 'int'),
      keep('campaign_name', seen.campaign_name, 'varchar'),
      keep('lead_id', request.lead_id, 'int'),
      keep('duration', request.duration, 'int'),
      request.transcript === undefined && TERMINAL_CALL_STATUSES.includes(request.status)
        ? `transcript = COALESCE(${TRANSCRIPT_OF_TURNS}, transcript)`
        : keep('transcript', request.transcript, 'text'),
      keep('variables', json(request.variables), 'jsonb'),
      keep('evaluation', json(request.evaluation), 'jsonb'),
      keep('carrier_cost', request.carrier_cost, 'numeric'),
      keep('total_cost', request.total_cost, 'numeric'),
      keep('answered_by', request.answered_by, 'varchar'),
      keep('recording_url', seen.record ? request.recording_url : null, 'text'),
      // The first final write names the webhook event and the end; later ones keep them.
      `webhook_event_id = COALESCE(webhook_event_id, ${parameter(ending.webhook_event_id)})`,
      `ended_at = COALESCE(ended_at, ${parameter(ending.ended_at)}::timestamptz)`,
      `webhook_due = webhook_due OR ${parameter(ending.webhook_due)}`,
      'updated_at = now()',
    ];
    // An UPDATE wrapped in a SELECT, so that both kinds of write return their rows the same way.
    return {
      sql: `WITH written AS (
              UPDATE calls SET ${assignments.join(', ')} WHERE external_id = $1 AND xmin = $2::text::xid RETURNING *
            ) SELECT * FROM written`,
      parameters,
    };
  }

  /** The fields every write sets outright. */
  private replaced(request: IngestCallRequest, seen: Seen): Record<string, unknown> {
    return {
      user_id: seen.user_id,
      assistant_id: seen.id,
      assistant_name: seen.name,
      type: request.type,
      status: request.status,
      client_phone_number: request.client_phone_number,
      assistant_phone_number: request.assistant_phone_number,
    };
  }

  /**
   * What the first final write sets: the webhook event, the end and, when the assistant's webhook is on, the mark
   * that a delivery is owed (cleared once one succeeds or gives up), by which the worker's sweep finds a delivery
   * whose job was lost.
   */
  private ending(
    newlyEnded: boolean,
    seen: Seen,
  ): { webhook_event_id: string | null; ended_at: Date | null; webhook_due: boolean } {
    return {
      webhook_event_id: newlyEnded ? `msg_${randomUUID()}` : null,
      ended_at: newlyEnded ? new Date() : null,
      webhook_due: newlyEnded && Boolean(seen.webhook_url) && seen.is_webhook_active,
    };
  }

  private async moveLead(manager: EntityManager, call: CallRow, newlyEnded: boolean): Promise<void> {
    if (newlyEnded) await settleLeadOfEndedCall(manager, call);
    else await markLeadInCall(manager, call);
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
