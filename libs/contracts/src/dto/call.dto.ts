import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';
import { ScalarMap } from './assistant.dto';
import { CallAnalysisResponse } from './call-analysis.dto';
import { CallTransferRecord, ENDED_REASONS, type EndedReason } from './call-control.dto';
import { PageQuery } from './pagination.dto';
import { RequestExample } from './request-example';

export const CALL_TYPES = ['inbound', 'outbound', 'web'] as const;
export const CALL_STATUSES = [
  'initiated',
  'ringing',
  'busy',
  'in-progress',
  'ended',
  'completed',
  'ended_by_customer',
  'ended_by_assistant',
  'no-answer',
  'failed',
] as const;
export const TERMINAL_CALL_STATUSES: readonly string[] = [
  'ended',
  'completed',
  'ended_by_customer',
  'ended_by_assistant',
  'busy',
  'no-answer',
  'failed',
];
/** A call in one of these is still under way: it holds one of its campaign's parallel slots. */
export const OPEN_CALL_STATUSES: readonly string[] = ['initiated', 'ringing', 'in-progress'];
/** Outcomes after which a lead is tried again (one retry budget, whatever the failure). */
export const UNREACHED_CALL_STATUSES: readonly string[] = ['busy', 'no-answer', 'failed'];
export const ANSWERED_BY = ['human', 'machine', 'unknown'] as const;

/** How far along a status is; a call only moves forward. */
export function callStatusRank(status: string): number {
  if (TERMINAL_CALL_STATUSES.includes(status)) return 3;
  return { initiated: 0, ringing: 1, 'in-progress': 2 }[status] ?? 0;
}

/** Fields a call's first write must give; a later write that leaves one out keeps the call's. */
export const FIRST_WRITE_FIELDS = [
  'assistant_id',
  'type',
  'status',
  'client_phone_number',
  'assistant_phone_number',
] as const;

const FIRST_WRITE = 'Required on the first write; a later write that leaves it out keeps the call’s';
const REPORTED_NUMBER =
  'Stored in E.164 when it reads as a valid number (international, or national in the country of the call’s own ' +
  'number), else as sent (a SIP extension, `anonymous`)';

/**
 * What the voice runtime reports about a call (PUT /api/internal/calls/{external_id}): the first write creates it
 * with `FIRST_WRITE_FIELDS`, a later one gives only what changed.
 */
@RequestExample({
  assistant_id: 1,
  type: 'outbound',
  status: 'completed',
  client_phone_number: '+14155550123',
  assistant_phone_number: '+14155550100',
  duration: 42,
})
export class IngestCallRequest {
  @ApiPropertyOptional({
    type: 'integer',
    description: `${FIRST_WRITE}. A call token cannot name another assistant than the call’s (422)`,
  })
  @Rule.Optional()
  @Rule.Id()
  assistant_id?: number;

  @ApiPropertyOptional({ enum: CALL_TYPES, description: FIRST_WRITE })
  @Rule.Optional()
  @Rule.OneOf(CALL_TYPES)
  type?: string;

  @ApiPropertyOptional({
    enum: CALL_STATUSES,
    description: `${FIRST_WRITE}. Only moves forward; a final one never changes (409)`,
  })
  @Rule.Optional()
  @Rule.OneOf(CALL_STATUSES)
  status?: string;

  @ApiPropertyOptional({ type: String, maxLength: 32, description: `${FIRST_WRITE}. ${REPORTED_NUMBER}` })
  @Rule.OptionalText(32)
  client_phone_number?: string;

  @ApiPropertyOptional({ type: String, maxLength: 32, description: `${FIRST_WRITE}. ${REPORTED_NUMBER}` })
  @Rule.OptionalText(32)
  assistant_phone_number?: string;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    description: 'Null or left out keeps the call’s. A call token cannot name another campaign than the call’s (422)',
  })
  @Rule.Optional()
  @Rule.Id()
  campaign_id?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    description: 'Null or left out keeps the call’s. A call token cannot name another lead than the call’s (422)',
  })
  @Rule.Optional()
  @Rule.Id()
  lead_id?: number | null;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Seconds' })
  @Rule.Optional()
  @Rule.Integer()
  @Rule.Between(0, 86_400)
  duration?: number;

  @ApiPropertyOptional({
    type: String,
    maxLength: 1_000_000,
    nullable: true,
    description:
      'On a final write, left out or null: the call’s transcript turns joined in `seq` order (`Assistant: ...`, ' +
      '`Customer: ...` lines); the call’s transcript is kept when it has none',
  })
  @Rule.OptionalText(1_000_000)
  transcript?: string | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Merged into the call’s variables key by key (a later write adds and replaces keys, never removes one)',
  })
  @Rule.Optional()
  @Rule.PlainObject()
  variables?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @Rule.Optional()
  @Rule.PlainObject()
  evaluation?: Record<string, unknown>;

  @ApiPropertyOptional({ type: Number, minimum: 0 })
  @Rule.Optional()
  @Rule.Numeric()
  @Rule.Between(0, 1_000_000)
  carrier_cost?: number;

  @ApiPropertyOptional({ type: Number, minimum: 0 })
  @Rule.Optional()
  @Rule.Numeric()
  @Rule.Between(0, 1_000_000)
  total_cost?: number;

  @ApiPropertyOptional({ enum: ANSWERED_BY })
  @Rule.Optional()
  @Rule.OneOf(ANSWERED_BY)
  answered_by?: string;

  @ApiPropertyOptional({
    enum: ENDED_REASONS,
    description:
      'Why the call ended (`assistant_hangup` when the assistant ended it with `end_call`); a transferred call keeps ' +
      '`transferred`',
  })
  @Rule.Optional()
  @Rule.OneOf(ENDED_REASONS)
  ended_reason?: EndedReason;

  @ApiPropertyOptional({ type: String, format: 'uri', maxLength: 2048 })
  @Rule.OptionalText(2048)
  @Rule.HttpUrl()
  recording_url?: string;
}

export class CallListQuery extends PageQuery {
  @ApiPropertyOptional({ enum: CALL_STATUSES })
  @Rule.Optional()
  @Rule.OneOf(CALL_STATUSES)
  status?: string;

  @ApiPropertyOptional({ enum: CALL_TYPES })
  @Rule.Optional()
  @Rule.OneOf(CALL_TYPES)
  type?: string;

  @ApiPropertyOptional({ type: String, maxLength: 32, description: "Part of the client's number" })
  @Rule.PhoneNumberPart()
  phone_number?: string;

  @ApiPropertyOptional({ type: 'integer' })
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(1, Rule.MAX_ID)
  assistant_id?: number;

  @ApiPropertyOptional({ type: 'integer' })
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(1, Rule.MAX_ID)
  campaign_id?: number;

  @ApiPropertyOptional({ type: String, format: 'date' })
  @Rule.Optional()
  @Rule.DateYmd()
  date_from?: string;

  @ApiPropertyOptional({ type: String, format: 'date' })
  @Rule.Optional()
  @Rule.DateYmd()
  date_to?: string;

  @ApiPropertyOptional({
    type: Boolean,
    description:
      'Only calls whose analysis graded them a success (`true`) or not (`false`): a pass, a score of 6 or more, ' +
      '`excellent` or `good`; calls without a grade are in neither',
  })
  @Rule.Optional()
  @Rule.BooleanText()
  success?: boolean;
}

export const ASSISTANT_REQUEST_STATUSES = ['pending', 'answered', 'rejected', 'fallback'] as const;
export type AssistantRequestStatus = (typeof ASSISTANT_REQUEST_STATUSES)[number];

/** What came of the ring-time hook on an inbound call (`server_url` of the number, or the account's). */
export class AssistantRequestOutcome {
  @ApiProperty({
    enum: ASSISTANT_REQUEST_STATUSES,
    description:
      '`answered`: the server’s answer was applied; `rejected`: the server refused the call; `fallback`: the ' +
      'number’s own assistant answered instead (see `reason`); `pending` while the server is asked',
  })
  status: AssistantRequestStatus;
  @ApiProperty({
    type: String,
    description: 'What happened, for the owner: names the server’s host at most, never its path or a secret',
    example: 'crm.example.com answered in 48 ms: assistant 12 takes the call, with 2 variables.',
  })
  reason: string;
}

export class CallResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) external_id: string;
  @ApiProperty({ type: String }) assistant_name: string;
  @ApiPropertyOptional({ type: String, description: 'Only when the call belongs to a campaign' })
  campaign_name?: string;
  @ApiProperty({ type: 'integer', nullable: true }) lead_id: number | null;
  @ApiProperty({ enum: CALL_TYPES }) type: string;
  @ApiProperty({ type: 'integer' }) duration: number;
  @ApiProperty({ type: String, nullable: true, description: 'Null for a web call' })
  assistant_phone_number: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Null for a web call' })
  client_phone_number: string | null;
  @ApiProperty({ enum: CALL_STATUSES }) status: string;
  @ApiProperty({ type: String }) transcript: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) variables: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) evaluation: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) webhook_response: Record<string, unknown>;
  @ApiProperty({ type: Number }) carrier_cost: number;
  @ApiProperty({ type: Number }) total_cost: number;
  @ApiProperty({ enum: ANSWERED_BY, description: '`unknown` until the voice runtime reports it' }) answered_by: string;
  @ApiPropertyOptional({
    type: String,
    description: 'Only when a recording exists and the call’s assistant records (`record: true`)',
  })
  recording_url?: string;
  @ApiProperty({
    type: CallAnalysisResponse,
    nullable: true,
    description:
      'The post-call analysis by the platform’s model provider: null until the call ends, and always without one',
  })
  analysis: CallAnalysisResponse | null;
  @ApiProperty({
    type: AssistantRequestOutcome,
    nullable: true,
    description: 'The ring-time hook’s outcome; null when no hook was asked (no `server_url`, or not inbound)',
  })
  assistant_request: AssistantRequestOutcome | null;
  @ApiProperty({ enum: ENDED_REASONS, nullable: true, description: 'Why the call ended; null: not said (or not over)' })
  ended_reason: EndedReason | null;
  @ApiProperty({
    type: CallTransferRecord,
    nullable: true,
    description: 'The call’s last transfer and how it went; null: none was tried',
  })
  transfer: CallTransferRecord | null;
  @ApiProperty({ type: String, example: '2026-01-02 03:04:05' }) created_at: string;
  @ApiProperty({ type: String, example: '2026-01-02 03:04:05' }) updated_at: string;
}

export class CallEnvelope {
  @ApiProperty({ type: CallResponse }) data: CallResponse;
}

export class IngestCallResponse {
  @ApiProperty({ type: String }) message: string;
  @ApiProperty({ type: CallResponse }) data: CallResponse;
}

/** POST /user/make_call: one outbound call now, from the assistant's phone number. */
export class MakeCallRequest {
  @ApiProperty({ type: String, maxLength: 32, example: '+14155550142', description: 'E.164: whom to call' })
  @Rule.RequiredText(32)
  phone_number: string;

  @ApiProperty({ type: 'integer', description: 'An outbound assistant with a phone number' })
  @Rule.Required()
  @Rule.Id()
  assistant_id: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Text, number or boolean values' })
  @Rule.Sometimes()
  @ScalarMap()
  variables?: Record<string, string | number | boolean | null>;
}

export class MakeCallResponse {
  @ApiProperty({ type: String, example: 'Call initiated successfully.' }) message: string;
  @ApiProperty({ type: 'integer', description: 'The call’s id, as in GET /user/calls/{id}' }) call_id: number;
  @ApiProperty({ type: String, enum: ['initiated'] }) status: 'initiated';
}

/**
 * 429 of a route that starts a call (`make_call`, a voice runtime's session): a new call beyond the account's limit
 * of calls in progress (nothing was written), told apart by `max_concurrent_calls`; or the rate limit's `{message}`.
 */
export class CallLimitResponse {
  @ApiProperty({
    type: String,
    example: 'The account has reached its limit of 10 calls in progress at once; try again when one ends.',
  })
  message: string;
  @ApiPropertyOptional({
    type: 'integer',
    example: 10,
    description:
      'Present when the account’s limit of calls in progress refused the call: that limit (its own, set by an ' +
      'operator, else the deployment’s); absent on the rate limit’s 429',
  })
  max_concurrent_calls?: number;
}

/** POST /user/calls/{id}/analysis: the call, its analysis pending again. */
export class CallAnalysisQueuedResponse {
  @ApiProperty({ type: String, example: 'The call’s analysis is queued.' }) message: string;
  @ApiProperty({ type: CallResponse }) data: CallResponse;
}
