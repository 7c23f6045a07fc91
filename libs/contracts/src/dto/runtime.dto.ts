import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { Rule } from '../validation';
import { POST_CALL_FIELD_TYPES, POST_CALL_ITEM_TYPES, type PostCallField, ScalarMap } from './assistant.dto';
import { CALL_TYPES, CallResponse } from './call.dto';
import { type CallRow, toCallResponse } from './call-response';
import { EndCallSettingsResponse, SessionAction, VoicemailSettingsResponse } from './call-control.dto';
import { LanguageResponse } from './language.dto';
import {
  TOOL_CALL_ERROR_CODES,
  TOOL_ERROR_DESCRIPTION,
  type ToolCallErrorCode,
  type ToolCallOutcomeLike,
  notAToolParameter,
  toolCallError,
  toolParametersSchema,
} from './tool.dto';
import { RequestExample } from './request-example';
import {
  ModelSettingsResponse,
  type StoredModelSettings,
  type StoredTranscriberSettings,
  type StoredVoiceSettings,
  TranscriberSettingsResponse,
  VoiceSettingsResponse,
  toVoiceSettingsResponse,
} from './voice-pipeline.dto';

/** Events one request may carry: a runtime batches the turns of a few seconds, never a whole call. */
export const MAX_EVENTS_PER_REQUEST = 100;
/** One turn's text; a call's whole transcript is at most 1,000,000 characters. */
export const MAX_EVENT_TEXT = 10_000;
export const CALL_EVENT_TYPES = ['transcript', 'note', 'dtmf'] as const;
export const DTMF_DIRECTIONS = ['inbound', 'outbound'] as const;
/** Keys of a phone's pad (and `w`, a half-second pause, which the runtime may send): at most 64 at a time. */
export const DTMF_DIGITS = /^[0-9*#A-Dw]{1,64}$/;
export const TRANSCRIPT_ROLES = ['assistant', 'user'] as const;

/** POST /internal/calls/{external_id}/session: the runtime has a call and asks what to run. */
@RequestExample({
  type: 'outbound',
  client_phone_number: '+14155550123',
  assistant_phone_number: '+14155550100',
  assistant_id: 1,
})
export class CallSessionRequest {
  @ApiProperty({ enum: CALL_TYPES })
  @Rule.Required()
  @Rule.OneOf(CALL_TYPES)
  type: (typeof CALL_TYPES)[number];

  @ApiPropertyOptional({
    type: String,
    maxLength: 32,
    example: '+14155550123',
    description:
      'The caller, or the callee; required for a call the service has not placed. Stored in E.164 when it reads as a ' +
      'valid number (international, or national in the country of the call’s own number), else as sent',
  })
  @Rule.OptionalText(32)
  client_phone_number?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 32,
    example: '+14155550100',
    description:
      'The dialled number of an inbound call, in any form a carrier writes it (`+1 (415) 555-0142`, `14155550142`, ' +
      '`4155550142` in the country of the number dialled): finds the assistant, and the call keeps the number as ' +
      'stored (E.164); or the number calling out. Required for a call the service has not placed',
  })
  @Rule.OptionalText(32)
  assistant_phone_number?: string;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    description: 'For a call the service did not place and that no number routes (a web call)',
  })
  @Rule.Optional()
  @Rule.Id()
  assistant_id?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true })
  @Rule.Optional()
  @Rule.Id()
  campaign_id?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true })
  @Rule.Optional()
  @Rule.Id()
  lead_id?: number | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'The call’s own variables (text, number or boolean), over the lead’s and the assistant’s',
  })
  @Rule.Sometimes()
  @ScalarMap()
  variables?: Record<string, string | number | boolean | null>;
}

export class SessionAssistant {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
  @ApiProperty({ type: String, enum: ['inbound', 'outbound'] }) type: string;
  @ApiProperty({ type: LanguageResponse }) language: LanguageResponse;
  @ApiProperty({ type: [LanguageResponse] }) secondary_languages: LanguageResponse[];
  @ApiProperty({ type: String, nullable: true }) voice_id: string | null;
  @ApiProperty({ type: ModelSettingsResponse, nullable: true, description: 'null: the runtime’s own LLM' })
  model: ModelSettingsResponse | null;
  @ApiProperty({ type: TranscriberSettingsResponse, nullable: true, description: 'null: the runtime’s own speech-to-text' })
  transcriber: TranscriberSettingsResponse | null;
  @ApiProperty({
    type: VoiceSettingsResponse,
    nullable: true,
    description: 'null: the runtime’s own text-to-speech, speaking `voice_id` when set',
  })
  voice: VoiceSettingsResponse | null;
  @ApiProperty({ type: String, example: 'Europe/Berlin' }) timezone: string;
  @ApiProperty({ type: String, nullable: true, description: 'Spoken first; `{{variables}}` already filled in' })
  initial_message: string | null;
  @ApiProperty({ type: String, nullable: true, description: '`{{variables}}` already filled in' })
  system_prompt: string | null;
  @ApiProperty({ type: 'integer', description: 'Seconds; the runtime ends the call then' }) max_duration: number;
  @ApiProperty({ type: Boolean }) record: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The assistant’s variables, then the lead’s, then the call’s: a later one wins',
  })
  variables: Record<string, unknown>;
  @ApiProperty({
    type: 'array',
    items: {
      type: 'object',
      required: ['name', 'type', 'description'],
      properties: {
        name: { type: 'string' },
        type: { type: 'string', enum: [...POST_CALL_FIELD_TYPES] },
        description: { type: 'string' },
        values: { type: 'array', items: { type: 'string' }, description: 'With `type: enum`: the values it takes' },
        items: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: [...POST_CALL_ITEM_TYPES] },
            values: { type: 'array', items: { type: 'string' } },
          },
          description: 'With `type: array`: what it lists',
        },
      },
    },
    description:
      'What to extract from the call when it ends, for the final write’s `evaluation` (the service also extracts ' +
      'it itself into the call’s `analysis.structured_data` when a model provider is configured)',
  })
  post_call_schema: PostCallField[];
}

export class SessionTool {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String, example: 'check_order' }) name: string;
  @ApiProperty({ type: String }) description: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The arguments as JSON Schema (an object of named properties); what the invoke route checks',
    example: {
      type: 'object',
      properties: { order_id: { type: 'string', description: 'The order number' } },
      required: ['order_id'],
      additionalProperties: false,
    },
  })
  parameters: Record<string, unknown>;
}

export class SessionKnowledgebase {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
}

export class CallSession {
  @ApiProperty({ type: CallResponse }) call: CallResponse;
  @ApiProperty({
    type: String,
    example: 'vrc_4Jd9...',
    description: 'For this call’s knowledge, tools, events and final write only; shown once',
  })
  token: string;
  @ApiProperty({ type: String, format: 'date-time', description: 'The call’s `max_duration` and ten minutes on' })
  expires_at: string;
  @ApiProperty({ type: SessionAssistant }) assistant: SessionAssistant;
  @ApiProperty({ type: [SessionTool] }) tools: SessionTool[];
  @ApiProperty({
    type: [SessionAction],
    description:
      'Built-in actions to offer the model beside the tools: `transfer_call` (with the assistant’s destinations; ' +
      'done through `POST .../transfer`), `end_call` (when the assistant may end the call) and `send_dtmf` (keys ' +
      'pressed in the room, reported as `dtmf` events)',
  })
  actions: SessionAction[];
  @ApiProperty({ type: EndCallSettingsResponse, description: 'Whether the assistant may end the call, and its goodbye' })
  end_call: EndCallSettingsResponse;
  @ApiProperty({
    type: VoicemailSettingsResponse,
    description: 'What to do when a machine answers; the message’s `{{variables}}` already filled in',
  })
  voicemail: VoicemailSettingsResponse;
  @ApiProperty({ type: SessionKnowledgebase, nullable: true }) knowledgebase: SessionKnowledgebase | null;
}

export class CallSessionEnvelope {
  @ApiProperty({ type: CallSession }) data: CallSession;
}

/** An assistant as a session reads it; its texts come with the call's `{{variables}}` already filled in. */
export interface SessionAssistantLike {
  id: number;
  name: string;
  type: string;
  language: LanguageResponse;
  secondary_languages: LanguageResponse[];
  voice_id: string | null;
  model: StoredModelSettings | null;
  transcriber: StoredTranscriberSettings | null;
  voice: StoredVoiceSettings | null;
  timezone: string;
  initial_message: string | null;
  system_prompt: string | null;
  max_duration: number;
  record: boolean;
  post_call_schema: PostCallField[];
  knowledgebase: SessionKnowledgebase | null;
  tools: { id: number; name: string; description: string; schema: { name: string; type: string }[] }[];
}

/** What a session answers: the call, its new token, and the assistant to run with its tools and knowledgebase. */
export function toCallSession(session: {
  call: CallRow;
  token: string;
  expiresAt: Date;
  assistant: SessionAssistantLike;
  variables: Record<string, unknown>;
  /** The built-in actions and call-control settings, as the session offers them (see the runtime's built-in-actions). */
  controls: Pick<CallSession, 'actions' | 'end_call' | 'voicemail'>;
}): CallSession {
  const { assistant } = session;
  return {
    call: toCallResponse(session.call),
    token: session.token,
    expires_at: session.expiresAt.toISOString(),
    assistant: {
      id: assistant.id,
      name: assistant.name,
      type: assistant.type,
      language: assistant.language,
      secondary_languages: assistant.secondary_languages,
      voice_id: assistant.voice_id,
      model: assistant.model,
      transcriber: assistant.transcriber,
      voice: toVoiceSettingsResponse(assistant.voice, assistant.voice_id),
      timezone: assistant.timezone,
      initial_message: assistant.initial_message,
      system_prompt: assistant.system_prompt,
      max_duration: assistant.max_duration,
      record: assistant.record,
      variables: session.variables,
      post_call_schema: assistant.post_call_schema,
    },
    tools: assistant.tools.map(toSessionTool),
    actions: session.controls.actions,
    end_call: session.controls.end_call,
    voicemail: session.controls.voicemail,
    knowledgebase: assistant.knowledgebase,
  };
}

export function toSessionTool(tool: SessionAssistantLike['tools'][number]): SessionTool {
  return {
    id: tool.id,
    name: tool.name,
    description: tool.description,
    parameters: toolParametersSchema(tool.schema),
  };
}

export class CallRejection {
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: 1000,
    description: 'What the runtime says to the caller before it hangs up; null: hang up without a word',
    example: 'Sorry, we cannot take your call. Goodbye.',
  })
  message: string | null;
}

/** 403 of a session: the owner's ring-time hook refused the call. */
export class CallRejectedResponse {
  @ApiProperty({ type: String, example: 'The owner’s server refused the call.' }) message: string;
  @ApiProperty({ type: CallRejection }) reject: CallRejection;
}

/** POST /internal/calls/{external_id}/tools/{tool_id}/invoke */
export class InvokeToolRequest {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'What the model filled in, checked against the tool’s parameters; a name they lack is refused',
  })
  @Rule.Optional()
  @Rule.PlainObject()
  @Rule.DataKeys(notAToolParameter)
  arguments?: Record<string, unknown>;
}

export class ToolInvocation {
  @ApiProperty({ type: 'integer', nullable: true, description: 'The endpoint’s HTTP status; null without an answer' })
  status: number | null;
  @ApiProperty({
    description:
      'Parsed JSON when the answer is a complete JSON object or array, else its text (at most 64 KB); null without an answer',
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
      { type: 'string', nullable: true },
    ],
  })
  body: unknown;
  @ApiProperty({ type: 'integer' }) duration_ms: number;
  @ApiProperty({ type: String, nullable: true, description: TOOL_ERROR_DESCRIPTION }) error: string | null;
  @ApiProperty({
    enum: TOOL_CALL_ERROR_CODES.filter((code) => code !== 'http_status'),
    nullable: true,
    description:
      'The kind of failure when no answer came: what a runtime may act on (tell the caller the look-up failed, in its own words)',
  })
  error_code: ToolCallErrorCode | null;
}

export class ToolInvocationEnvelope {
  @ApiProperty({ type: ToolInvocation }) data: ToolInvocation;
}

/** The runtime's invocation answer: the endpoint's status and body, or why none came (never this route's status). */
export function toToolInvocation(
  result: Pick<ToolCallOutcomeLike, 'response' | 'durationMs' | 'error'>,
): ToolInvocation {
  return {
    status: result.response?.status ?? null,
    body: result.response?.body ?? null,
    duration_ms: result.durationMs,
    ...toolCallError(result),
  };
}

export class RuntimeEvent {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'The runtime’s order of events in the call; unique' })
  @Rule.Required()
  @Rule.Integer()
  @Rule.Between(0, Rule.MAX_ID)
  seq: number;

  @ApiProperty({ enum: CALL_EVENT_TYPES })
  @Rule.Required()
  @Rule.OneOf(CALL_EVENT_TYPES)
  type: (typeof CALL_EVENT_TYPES)[number];

  @ApiProperty({ type: String, format: 'date-time', example: '2026-01-02T03:04:05.678Z' })
  @Rule.Required()
  @Rule.DateTime()
  at: string;

  @ApiPropertyOptional({ enum: TRANSCRIPT_ROLES, description: 'Required for a transcript turn; a note has none' })
  @ValidateIf((event: RuntimeEvent) => event.type === 'transcript' || event.role !== undefined)
  @Rule.RequiredWhen('type', 'transcript')
  @Rule.ProhibitedUnless('type', 'transcript')
  @Rule.OneOf(TRANSCRIPT_ROLES)
  role?: (typeof TRANSCRIPT_ROLES)[number];

  @ApiPropertyOptional({ type: String, maxLength: MAX_EVENT_TEXT, description: 'Required for a turn and a note' })
  @ValidateIf((event: RuntimeEvent) => event.type !== 'dtmf' || event.text !== undefined)
  @Rule.ProhibitedWhen('type', 'dtmf')
  @Rule.RequiredText(MAX_EVENT_TEXT)
  text?: string;

  @ApiPropertyOptional({
    type: String,
    pattern: DTMF_DIGITS.source,
    example: '1#',
    description: '`dtmf`: the keys pressed (0-9, *, #, A-D; `w` a pause), in order',
  })
  @ValidateIf((event: RuntimeEvent) => event.type === 'dtmf' || event.digits !== undefined)
  @Rule.RequiredWhen('type', 'dtmf')
  @Rule.ProhibitedUnless('type', 'dtmf')
  @Rule.String()
  @Rule.Pattern(DTMF_DIGITS)
  digits?: string;

  @ApiPropertyOptional({
    enum: DTMF_DIRECTIONS,
    description: '`dtmf`: `inbound` the caller pressed them, `outbound` the assistant sent them',
  })
  @ValidateIf((event: RuntimeEvent) => event.type === 'dtmf' || event.direction !== undefined)
  @Rule.RequiredWhen('type', 'dtmf')
  @Rule.ProhibitedUnless('type', 'dtmf')
  @Rule.OneOf(DTMF_DIRECTIONS)
  direction?: (typeof DTMF_DIRECTIONS)[number];

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Milliseconds from the call’s start' })
  @Rule.Optional()
  @Rule.Integer()
  @Rule.Between(0, 86_400_000)
  start_ms?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'Milliseconds from the call’s start; not before `start_ms`',
  })
  @Rule.Optional()
  @Rule.Integer()
  @Rule.Between(0, 86_400_000)
  @Rule.AtLeastField('start_ms')
  end_ms?: number;
}

/** POST /internal/calls/{external_id}/events */
export class RuntimeEventsRequest {
  @ApiProperty({
    type: [RuntimeEvent],
    minItems: 1,
    maxItems: MAX_EVENTS_PER_REQUEST,
    example: [{ seq: 1, type: 'transcript', role: 'assistant', text: 'Hello!', at: '2026-01-02T03:04:05.678Z' }],
  })
  @Rule.Required()
  @Rule.ArrayMin(1)
  @Rule.ArrayMax(MAX_EVENTS_PER_REQUEST)
  @Rule.EachNested(() => RuntimeEvent)
  events: RuntimeEvent[];
}

export class RuntimeEventsReceipt {
  @ApiProperty({ type: 'integer', description: 'Events stored by this request' }) recorded: number;
  @ApiProperty({ type: 'integer', description: 'Events whose `seq` the call already had (kept as first sent)' })
  duplicates: number;
}

export class RuntimeEventsEnvelope {
  @ApiProperty({ type: String, example: 'Events recorded.' }) message: string;
  @ApiProperty({ type: RuntimeEventsReceipt }) data: RuntimeEventsReceipt;
}

/** Of `sent` events, `recorded` were new: the rest were already stored under their seq. */
export function toRuntimeEventsReceipt(recorded: number, sent: number): RuntimeEventsReceipt {
  return { recorded, duplicates: sent - recorded };
}

/** Why a tool the service called for a call failed, as its owner sees it. */
export class ToolCallFailure {
  @ApiProperty({ enum: TOOL_CALL_ERROR_CODES, description: '`http_status`: the endpoint answered, not with a success' })
  code: ToolCallErrorCode;
  @ApiProperty({
    type: String,
    example: 'No answer from api.example.com within 10000 ms',
    description: 'Naming the endpoint’s host at most: never its path, query, a header or an argument',
  })
  message: string;
}

/**
 * One entry of GET /user/calls/{id}/events: a turn, a note, a tool invocation, keys pressed, a transfer or the
 * owner's live control, in the order they happened.
 */
export class CallEventResponse {
  @ApiProperty({ enum: ['transcript', 'note', 'tool_call', 'dtmf', 'transfer', 'control'] }) type: string;
  @ApiProperty({ type: String, format: 'date-time' }) at: string;
  @ApiPropertyOptional({ type: 'integer', description: 'transcript and note' }) seq?: number;
  @ApiPropertyOptional({ enum: TRANSCRIPT_ROLES, description: 'transcript' }) role?: string;
  @ApiPropertyOptional({ type: String, description: 'transcript and note; control’s `say` and `instruct`' })
  text?: string;
  @ApiPropertyOptional({
    enum: ['hangup', 'say', 'instruct'],
    description: 'control: what the owner asked of the live call',
  })
  action?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'transcript' }) start_ms?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'transcript' }) end_ms?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'tool_call' }) tool_id?: number;
  @ApiPropertyOptional({ type: String, description: 'tool_call' }) name?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'tool_call' })
  arguments?: Record<string, unknown>;
  @ApiPropertyOptional({
    oneOf: [
      { type: 'integer', nullable: true },
      { type: 'string', enum: ['transferred', 'failed', 'declined'] },
    ],
    description: 'tool_call: the endpoint’s HTTP status (null without an answer); transfer: how it went',
  })
  status?: number | string | null;
  @ApiPropertyOptional({ type: String, description: 'dtmf: the keys, in order' }) digits?: string;
  @ApiPropertyOptional({ enum: DTMF_DIRECTIONS, description: 'dtmf: the caller’s (`inbound`) or the assistant’s' })
  direction?: string;
  @ApiPropertyOptional({ type: String, description: 'transfer: the destination’s name' }) destination?: string;
  @ApiPropertyOptional({ enum: ['cold', 'warm'], description: 'transfer' }) mode?: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'transfer: why it did not connect' })
  reason?: string | null;
  @ApiPropertyOptional({ type: 'integer', description: 'tool_call' }) duration_ms?: number;
  @ApiPropertyOptional({
    type: ToolCallFailure,
    nullable: true,
    description:
      'tool_call: why it failed (no answer, or an answer that is not a success); null when it succeeded; absent from ' +
      'tool calls recorded before it was kept',
  })
  error?: ToolCallFailure | null;
}

/** A row of `call_events`: the columns every event has, and what its type carries. */
export interface CallEventRow {
  type: 'transcript' | 'note' | 'tool_call' | 'dtmf' | 'transfer' | 'control';
  seq: number | null;
  at: Date;
  data: Record<string, unknown>;
}

export function toCallEventResponse(row: CallEventRow): CallEventResponse {
  return {
    type: row.type,
    at: row.at.toISOString(),
    ...(row.seq === null ? {} : { seq: row.seq }),
    ...row.data,
  };
}
