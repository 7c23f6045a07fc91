import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  type AssistantRequestOutcome,
  type CallAnalysis,
  type CallRow,
  NO_TRANSCRIPT_TO_ANALYSE,
  PENDING_ANALYSIS,
} from '@app/contracts';
import { type EndedCall, markLeadInCall, settleLeadOfEndedCall } from './call-outcomes';
import { CallLimitReached, lockedCallSlot } from './account-call-slots.repository';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/**
 * What one statement reads before the runtime's write of a call: the assistant (the one the write names, else the
 * call's own; its fields null when there is none), the references named, the call.
 */
export interface CallBeforeWrite {
  id: number | null;
  user_id: number | null;
  name: string | null;
  webhook_url: string | null;
  is_webhook_active: boolean | null;
  /** Whether the assistant records its calls: a recording's URL is kept only then. */
  record: boolean | null;
  campaign_found: boolean;
  campaign_name: string | null;
  lead_found: boolean;
  /** The call's account, assistant, campaign, lead, status, own number and row version (`xmin`), when it exists. */
  call_user_id: number | null;
  call_assistant_id: number | null;
  call_campaign_id: number | null;
  call_lead_id: number | null;
  call_status: string | null;
  call_assistant_phone_number: string | null;
  call_version: string | null;
  /** A campaign of the call's account waits for a call slot (`account_call_slots.campaigns_waiting`). */
  account_campaigns_waiting: boolean | null;
}

/** The runtime's write of a call, as the ingestion decided it. */
export interface CallWrite {
  status: string;
  /** The account and assistant the call is written for; absent when a later write names none and the call's is gone. */
  assistant?: { user_id: number; id: number; name: string };
  /**
   * What the write gives; on a later write, a field it leaves out (absent or null) keeps the call's value, and
   * `variables` are merged into the call's, key by key. A first write gives `type` and both numbers.
   */
  given: {
    type?: string;
    client_phone_number?: string;
    assistant_phone_number?: string;
    campaign_id?: number | null;
    campaign_name: string | null;
    lead_id?: number | null;
    duration?: number;
    transcript?: string | null;
    variables?: Record<string, unknown>;
    evaluation?: Record<string, unknown>;
    carrier_cost?: number;
    total_cost?: number;
    answered_by?: string;
    ended_reason?: string;
    recording_url?: string | null;
  };
  /** A later write whose transcript is the call's transcript turns, joined (kept when there are none). */
  transcriptOfTurns: boolean;
  /** What the first final write sets, and a later one keeps: the webhook event, the end, the delivery owed. */
  ending: { webhook_event_id: string | null; ended_at: Date | null; webhook_due: boolean };
  /**
   * A final write, with a model provider configured: the call's analysis is requested (`pending`, its first run) when
   * the call has a transcript, else settled `skipped`, unless it has one already (a `skipped` for want of a
   * transcript gives way to a later write that brings one).
   */
  analyse: boolean;
  /** A first write's mark that the ring-time hook is being asked (`CallIngestion`'s `FirstWrite`). */
  assistantRequest?: AssistantRequestOutcome;
}

/** The analysis a call that ends with the transcript `transcript` (an SQL expression) starts with. */
const requestedAnalysis = (transcript: string) =>
  `CASE WHEN ${transcript} ~ '\\S' THEN ${jsonOf(PENDING_ANALYSIS)}
        ELSE ${jsonOf(PENDING_ANALYSIS)} || jsonb_build_object('status', 'skipped', 'error', ${literal(NO_TRANSCRIPT_TO_ANALYSE)},
                                                      'analyzed_at', to_jsonb(now())) END`;

function jsonOf(value: object): string {
  return `${literal(JSON.stringify(value))}::jsonb`;
}

/** A constant of this file as an SQL literal (never a value of a request: those are parameters). */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * The runtime's transcript turns joined in their order, one line a turn (`Assistant: ...`, `Customer: ...`, as the
 * calls' transcripts read); null for a call without turns.
 */
const TRANSCRIPT_OF_TURNS = `(SELECT string_agg(CASE WHEN turn.data->>'role' = 'assistant' THEN 'Assistant: ' ELSE 'Customer: ' END
                                 || (turn.data->>'text'), E'\n' ORDER BY turn.seq)
     FROM call_events turn WHERE turn.call_id = calls.id AND turn.type = 'transcript')`;

/** The transcript a later write sets: the call's turns joined, or the one given, else the call's own. */
function transcriptOf(write: CallWrite, parameter: (value: unknown) => string): [string, string] {
  return [
    'transcript',
    write.transcriptOfTurns
      ? `COALESCE(${TRANSCRIPT_OF_TURNS}, transcript)`
      : `COALESCE(${parameter(write.given.transcript ?? null)}::text, transcript)`,
  ];
}

/**
 * The columns a later write sets (`[column, expression]`), each an SQL expression over the call's row with the
 * write's values as parameters: the status and the assistant outright, a field the write leaves out kept, the
 * variables merged key by key, the transcript from the turns when the write asks for it. Numbers are cast to their
 * columns' scale, so that a value compares as it would be stored. Without `derived`, the columns that only follow
 * the ids written (the account, the assistant's and campaign's names) are left out: they tell no write apart.
 */
function laterWrite(
  write: CallWrite,
  parameter: (value: unknown) => string,
  { derived }: { derived: boolean },
): [string, string][] {
  const set = (column: string, value: string): [string, string] => [column, value];
  const keep = (column: string, value: unknown, type: string) =>
    set(column, `COALESCE(${parameter(value ?? null)}::${type}, ${column})`);
  const json = (value: Record<string, unknown> | undefined) => (value == null ? null : JSON.stringify(value));
  const { assistant, given } = write;
  return [
    set('status', `${parameter(write.status)}::varchar`),
    ...(assistant && derived
      ? [
          set('user_id', `${parameter(assistant.user_id)}::int`),
          set('assistant_name', `${parameter(assistant.name)}::varchar`),
        ]
      : []),
    ...(assistant ? [set('assistant_id', `${parameter(assistant.id)}::int`)] : []),
    keep('type', given.type, 'varchar'),
    keep('client_phone_number', given.client_phone_number, 'varchar'),
    keep('assistant_phone_number', given.assistant_phone_number, 'varchar'),
    keep('campaign_id', given.campaign_id, 'int'),
    ...(derived ? [keep('campaign_name', given.campaign_name, 'varchar')] : []),
    keep('lead_id', given.lead_id, 'int'),
    keep('duration', given.duration, 'int'),
    transcriptOf(write, parameter),
    set('variables', `variables || COALESCE(${parameter(json(given.variables))}::jsonb, '{}')`),
    keep('evaluation', json(given.evaluation), 'jsonb'),
    keep('carrier_cost', given.carrier_cost, 'numeric(12, 4)'),
    keep('total_cost', given.total_cost, 'numeric(12, 4)'),
    keep('answered_by', given.answered_by, 'varchar'),
    // A call the service transferred says so whatever the runtime says afterwards.
    set(
      'ended_reason',
      `CASE WHEN ended_reason = 'transferred' THEN ended_reason
            ELSE COALESCE(${parameter(given.ended_reason ?? null)}::varchar, ended_reason) END`,
    ),
    keep('recording_url', given.recording_url, 'text'),
  ];
}

/**
 * The runtime's writes of a call (`CallIngestion`): read, decide, then write only if the call is still as read, by
 * external id. The runtime acts for no account: a write notes the call's account (`writeForAccount`), so that
 * account's next reads find it.
 */
@Injectable()
export class CallWritesRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /**
   * The assistant of the write (the one named, else the call's), the campaign and lead it names (of that account, or
   * the call's when it has no assistant left), and the call so far; always one row.
   */
  async readBeforeWriteByExternalId(
    externalId: string,
    assistantId: number | null,
    campaignId: number | null,
    leadId: number | null,
  ): Promise<CallBeforeWrite> {
    // One function of the database (migration 1764210000000): the six tables' join is planned once per connection
    // instead of on every write, where planning it cost several times running it.
    const [seen] = await this.rowsOf<CallBeforeWrite>(`SELECT * FROM call_before_write($1, $2, $3, $4)`, [
      externalId,
      assistantId,
      campaignId,
      leadId,
    ]);
    return seen;
  }

  async findByExternalId(externalId: string): Promise<CallRow | undefined> {
    const [call] = (await this.manager.query(`SELECT * FROM calls WHERE external_id = $1`, [externalId])) as CallRow[];
    return call;
  }

  /** Holds the call (if it exists) until the transaction it is in ends. */
  async lockByExternalId(externalId: string): Promise<void> {
    await this.manager.query(`SELECT 1 FROM calls WHERE external_id = $1 FOR UPDATE`, [externalId]);
  }

  /**
   * The call's first write; undefined if a concurrent first write won the race. With `callLimit` (the deployment's
   * limit of calls in progress), the call is written only while its account has a call slot free, taken in the same
   * statement; else nothing is written and the answer is `CallLimitReached`.
   */
  async insertByExternalIdIfAbsent(
    externalId: string,
    write: CallWrite,
    callLimit?: number,
  ): Promise<CallRow | CallLimitReached | undefined> {
    const { assistant, given } = write;
    const phoneCall = given.type !== 'web';
    if (!assistant || !given.type || (phoneCall && (!given.client_phone_number || !given.assistant_phone_number))) {
      throw new Error('A call’s first write names its assistant, type and (a phone call’s) numbers');
    }
    const values: Record<string, unknown> = {
      user_id: assistant.user_id,
      assistant_id: assistant.id,
      assistant_name: assistant.name,
      type: given.type,
      status: write.status,
      client_phone_number: given.client_phone_number ?? null,
      assistant_phone_number: given.assistant_phone_number ?? null,
      campaign_id: given.campaign_id ?? null,
      campaign_name: given.campaign_name,
      lead_id: given.lead_id ?? null,
      duration: given.duration ?? 0,
      transcript: given.transcript ?? '',
      variables: JSON.stringify(given.variables ?? {}),
      evaluation: JSON.stringify(given.evaluation ?? {}),
      carrier_cost: given.carrier_cost ?? 0,
      total_cost: given.total_cost ?? 0,
      answered_by: given.answered_by ?? null,
      ended_reason: given.ended_reason ?? null,
      recording_url: given.recording_url ?? null,
      ...write.ending,
      ...(write.analyse ? firstAnalysis(given.transcript ?? '') : {}),
      ...(write.assistantRequest ? { assistant_request: JSON.stringify(write.assistantRequest) } : {}),
    };
    const columns = Object.keys(values);
    const parameters = [externalId, ...Object.values(values)];
    const insert = `INSERT INTO calls (external_id, ${columns.join(', ')})
            SELECT $1, ${columns.map((_, index) => `$${index + 2}`).join(', ')}`;
    if (callLimit === undefined) {
      const [written] = await this.writeForAccount<CallRow>(
        `${insert} ON CONFLICT (external_id) DO NOTHING RETURNING *, user_id AS written_for`,
        parameters,
      );
      return written;
    }
    const account = `$${parameters.push(assistant.user_id)}`;
    const limit = `$${parameters.push(callLimit)}`;
    const [row] = await this.writeForAccount<CallRow & { slot_free: number; slot_limit: number }>(
      `WITH ${lockedCallSlot(account, limit)},
            written AS (${insert} FROM slot WHERE slot.free > 0 ON CONFLICT (external_id) DO NOTHING RETURNING *)
       SELECT written.*, written.user_id AS written_for, slot.free AS slot_free, slot.max_concurrent_calls AS slot_limit
         FROM slot LEFT JOIN written ON true`,
      parameters,
    );
    if (!row) throw new Error(`Account ${assistant.user_id} has no call slot row`);
    const { slot_free: free, slot_limit: maxConcurrentCalls, ...written } = row;
    if (written.id !== null) return written;
    return free > 0 ? undefined : new CallLimitReached(maxConcurrentCalls);
  }

  /** A later write, if the call is still at `version` (its `xmin` as read); else undefined. */
  async updateByExternalIdIfUnchanged(
    externalId: string,
    version: string,
    write: CallWrite,
  ): Promise<CallRow | undefined> {
    const parameters: unknown[] = [externalId, version];
    const parameter = (value: unknown) => `$${parameters.push(value)}`;
    const { ending } = write;
    const assignments = [
      ...laterWrite(write, parameter, { derived: true }).map(([column, value]) => `${column} = ${value}`),
      // The first final write names the webhook event and the end; later ones keep them.
      `webhook_event_id = COALESCE(webhook_event_id, ${parameter(ending.webhook_event_id)})`,
      `ended_at = COALESCE(ended_at, ${parameter(ending.ended_at)}::timestamptz)`,
      `webhook_due = webhook_due OR ${parameter(ending.webhook_due)}`,
      ...(write.analyse ? analysisRequest(transcriptOf(write, parameter)[1]) : []),
      'updated_at = now()',
    ];
    // An UPDATE wrapped in a SELECT, so that both kinds of write return their rows the same way.
    const [written] = await this.writeForAccount<CallRow>(
      `WITH written AS (
              UPDATE calls SET ${assignments.join(', ')} WHERE external_id = $1 AND xmin = $2::text::xid RETURNING *
            ) SELECT *, user_id AS written_for FROM written`,
      parameters,
    );
    return written;
  }

  /**
   * The call as it is, if still at `version`, and whether `write` would leave every field the runtime writes as it
   * is (the values compared as the columns store them: costs rounded to their scale, variables merged, a missing
   * transcript as the turns joined); undefined when the call changed since it was read.
   */
  async compareWriteByExternalId(
    externalId: string,
    version: string,
    write: CallWrite,
  ): Promise<{ row: CallRow; unchanged: boolean } | undefined> {
    const parameters: unknown[] = [externalId, version];
    const parameter = (value: unknown) => `$${parameters.push(value)}`;
    const same = laterWrite(write, parameter, { derived: false }).map(
      ([column, value]) => `${column} IS NOT DISTINCT FROM ${value}`,
    );
    // A repeat that changes nothing stands for the write it repeats, and is noted as that write was.
    const [found] = await this.writeForAccount<CallRow & { unchanged: boolean }>(
      `SELECT *, CASE WHEN unchanged THEN user_id END AS written_for
         FROM (SELECT *, (${same.join(' AND ')}) AS unchanged FROM calls WHERE external_id = $1 AND xmin = $2::text::xid) found`,
      parameters,
    );
    if (!found) return undefined;
    const { unchanged, ...row } = found;
    return { row, unchanged };
  }

  /**
   * The account's running campaigns, if one of them waits for a call slot; the mark is cleared (a claim that still
   * finds the account full sets it again). Empty when none waits.
   */
  async takeWaitingCampaigns(userId: number): Promise<number[]> {
    const rows = (await this.manager.query(
      `WITH taken AS (
         UPDATE account_call_slots SET campaigns_waiting = false
          WHERE user_id = $1 AND campaigns_waiting RETURNING user_id)
       SELECT c.id FROM campaigns c JOIN taken ON taken.user_id = c.user_id
        WHERE c.status = 'in-progress' ORDER BY c.id`,
      [userId],
    )) as { id: number }[];
    return rows.map(({ id }) => id);
  }

  /** What the call's end does to its lead (see `settleLeadOfEndedCall`), in this repository's transaction. */
  settleLeadOfEndedCall(call: EndedCall): Promise<void> {
    return settleLeadOfEndedCall(this.manager, call);
  }

  /** The lead of a call under way is in one (see `markLeadInCall`), in this repository's transaction. */
  markLeadInCall(call: Pick<CallRow, 'lead_id' | 'secondary_contact_id'>): Promise<void> {
    return markLeadInCall(this.manager, call);
  }
}

/**
 * The assignments of a final write that requests the call's analysis (SET's right-hand sides read the row as it was):
 * its first run when the call has none yet, or when it was skipped for want of a transcript and this write brings one;
 * otherwise it stays as it is (a write that raced this one requested it, or it is under way or settled).
 */
function analysisRequest(transcript: string): string[] {
  const first = `(analysis IS NULL OR (analysis->>'status' = 'skipped' AND analysis->>'error' = ${literal(
    NO_TRANSCRIPT_TO_ANALYSE,
  )} AND ${transcript} ~ '\\S'))`;
  return [
    `analysis = CASE WHEN ${first} THEN ${requestedAnalysis(transcript)} ELSE analysis END`,
    `analysis_run = CASE WHEN ${first} AND ${transcript} ~ '\\S' THEN analysis_run + 1 ELSE analysis_run END`,
    `analysis_changed_at = CASE WHEN ${first} THEN now() ELSE analysis_changed_at END`,
  ];
}

/** The analysis columns of a call whose first write ends it. */
function firstAnalysis(transcript: string): {
  analysis: string;
  analysis_run: number;
  analysis_changed_at: Date;
} {
  const now = new Date();
  const analysis: CallAnalysis = /\S/.test(transcript)
    ? PENDING_ANALYSIS
    : { ...PENDING_ANALYSIS, status: 'skipped', error: NO_TRANSCRIPT_TO_ANALYSE, analyzed_at: now.toISOString() };
  return {
    analysis: JSON.stringify(analysis),
    analysis_run: analysis.status === 'pending' ? 1 : 0,
    analysis_changed_at: now,
  };
}
