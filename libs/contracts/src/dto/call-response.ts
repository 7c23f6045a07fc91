import type { CallAnalysis, CallAnalysisResponse } from './call-analysis.dto';
import type { AssistantRequestOutcome, CallResponse } from './call.dto';
import type { EndedReason, StoredCallTransfer } from './call-control.dto';
import { utcDateTime } from './lead.dto';

/**
 * A row of `calls` as `SELECT *` reads it: the one description of the table, for the repositories that read and
 * write it (libs/database's `CallsRepository` and its siblings) and the mapper below. It lives here rather than
 * beside them because libs/database imports this lib (call-outcomes.ts its call and lead statuses): importing the
 * row from there would make the two libs import each other.
 */
export interface CallRow {
  id: number;
  user_id: number;
  external_id: string;
  assistant_id: number | null;
  assistant_name: string;
  campaign_id: number | null;
  campaign_name: string | null;
  lead_id: number | null;
  /** Set when the call went to one of the lead's secondary contacts rather than its own number. */
  secondary_contact_id: number | null;
  /** The number a placed call is made from. */
  phone_number_id: number | null;
  type: string;
  duration: number;
  /** Null for a web call only (and for it always). */
  assistant_phone_number: string | null;
  client_phone_number: string | null;
  status: string;
  transcript: string;
  variables: Record<string, unknown>;
  evaluation: Record<string, unknown>;
  webhook_response: Record<string, unknown>;
  /** The `call.ended` event's id, named by the first final write, and whether its delivery is owed. */
  webhook_event_id: string | null;
  webhook_due: boolean;
  /** The `call.started` event's id, named by the first session, and whether its delivery is owed. */
  started_event_id: string | null;
  started_webhook_due: boolean;
  carrier_cost: string;
  total_cost: string;
  answered_by: string | null;
  recording_url: string | null;
  /** A placed call's dial: pending, dialing (since `dial_started_at`), dialed or failed; null for others. */
  dial_state: string | null;
  dial_started_at: Date | null;
  /** The post-call analysis: null until the call ends (or without a model provider), then pending and settled. */
  analysis: CallAnalysis | null;
  /**
   * Which request of the analysis is the current one (the end's, then each re-run's): a run's job writes its outcome
   * only while it is still the current one and pending, so nothing is analysed twice and an older run never
   * overwrites a newer.
   */
  analysis_run: number;
  /** `analysis.success.passed`, kept apart for the list's `success` filter and its counters. */
  analysis_success: boolean | null;
  /** The `call.analyzed` event's id of the current run, and whether its delivery is owed. */
  analysis_event_id: string | null;
  analysis_webhook_due: boolean;
  /** When the analysis was last requested or settled: the sweep of lost jobs reads it. */
  analysis_changed_at: Date | null;
  /** What came of the ring-time hook; null when none was asked. */
  assistant_request: AssistantRequestOutcome | null;
  /** Why the call ended, as the runtime (or a transfer) said. */
  ended_reason: EndedReason | null;
  /** The call's last transfer. */
  transfer: StoredCallTransfer | null;
  ended_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns of a call that its answer shows: what a statement reads when it reads a call to show and no more. */
export const CALL_RESPONSE_COLUMNS = [
  'id',
  'external_id',
  'assistant_name',
  'campaign_name',
  'lead_id',
  'type',
  'duration',
  'assistant_phone_number',
  'client_phone_number',
  'status',
  'transcript',
  'variables',
  'evaluation',
  'webhook_response',
  'carrier_cost',
  'total_cost',
  'answered_by',
  'recording_url',
  'analysis',
  'assistant_request',
  'ended_reason',
  'transfer',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof CallRow)[];

export type CallResponseRow = Pick<CallRow, (typeof CALL_RESPONSE_COLUMNS)[number]>;

/**
 * `campaign_name` only for campaign calls and `recording_url` only with a recording of an assistant that records
 * (kept at ingestion only then), as the spec says; `answered_by` is `unknown` until the runtime reports it.
 */
export function toCallResponse(row: CallResponseRow): CallResponse {
  return {
    id: row.id,
    external_id: row.external_id,
    assistant_name: row.assistant_name,
    ...(row.campaign_name ? { campaign_name: row.campaign_name } : {}),
    lead_id: row.lead_id,
    type: row.type,
    duration: row.duration,
    assistant_phone_number: row.assistant_phone_number,
    client_phone_number: row.client_phone_number,
    status: row.status,
    transcript: row.transcript,
    variables: row.variables,
    evaluation: row.evaluation,
    webhook_response: row.webhook_response,
    carrier_cost: Number(row.carrier_cost),
    total_cost: Number(row.total_cost),
    answered_by: row.answered_by ?? 'unknown',
    ...(row.recording_url ? { recording_url: row.recording_url } : {}),
    analysis: toCallAnalysisResponse(row.analysis),
    // Its status and reason: a refused call's row also keeps what the runtime says, which is not the owner's to read.
    assistant_request: row.assistant_request
      ? { status: row.assistant_request.status, reason: row.assistant_request.reason }
      : null,
    ended_reason: row.ended_reason,
    transfer: row.transfer,
    created_at: utcDateTime(row.created_at),
    updated_at: utcDateTime(row.updated_at),
  };
}

/** The stored analysis as a read shows it: its fields only, `analyzed_at` as the call's other times are. */
export function toCallAnalysisResponse(stored: CallAnalysis | null): CallAnalysisResponse | null {
  if (!stored) return null;
  return {
    status: stored.status,
    summary: stored.summary,
    structured_data: stored.structured_data,
    success: stored.success,
    model: stored.model,
    tokens: stored.tokens,
    error: stored.error,
    analyzed_at: stored.analyzed_at ? utcDateTime(new Date(stored.analyzed_at)) : null,
  };
}
