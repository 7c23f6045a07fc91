import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateBy, ValidateIf } from 'class-validator';
import { toE164 } from '../phone-numbers';
import { Rule } from '../validation';
import { RequestExample } from './request-example';
import type { CallEventRow } from './runtime.dto';
import { TOOL_NAME_PATTERN } from './tool.dto';

/** Vapi's and Retell's bound on an assistant's transfer destinations: a menu a model can still choose from. */
export const MAX_TRANSFER_DESTINATIONS = 10;
export const TRANSFER_MODES = ['cold', 'warm'] as const;
export type TransferMode = (typeof TRANSFER_MODES)[number];
export const VOICEMAIL_ACTIONS = ['hangup', 'leave_message'] as const;
/** What the assistant says (a goodbye, a transfer's announcement, a voicemail message). */
export const MAX_SPOKEN_MESSAGE = 1000;
/** livekit/sip.go `TransferSIPParticipantRequest.ValidateResult` takes `sip:` and `sips:` URIs (and `tel:`). */
export const SIP_URI_PATTERN = /^sips?:[^\s<>"]+$/;

/** A number in E.164 exactly as stored: `+` and the digits of a number valid in its country. */
const E164 = () =>
  ValidateBy(
    { name: 'e164', validator: { validate: (value) => typeof value === 'string' && toE164(value) === value } },
    { message: 'The :attribute field must be a phone number in E.164 format (+14155550142).' },
  );

/** One place an assistant may hand a call to: a number or a SIP URI, never both. */
export class TransferDestination {
  @ApiProperty({
    type: String,
    maxLength: 64,
    pattern: TOOL_NAME_PATTERN.source,
    example: 'billing_desk',
    description: 'What the assistant names it by (the tools’ naming rule); unique among the assistant’s',
  })
  @Rule.RequiredText(64)
  @Rule.Pattern(TOOL_NAME_PATTERN)
  name: string;

  @ApiProperty({ type: String, maxLength: 255, description: 'When the assistant should transfer there' })
  @Rule.RequiredText(255)
  description: string;

  @ApiPropertyOptional({ type: String, maxLength: 32, nullable: true, example: '+14155550142', description: 'E.164' })
  @ValidateIf((destination: TransferDestination) => destination.sip_uri == null || destination.number != null)
  @Rule.RequiredWithout('sip_uri')
  @Rule.String()
  @Rule.MaxChars(32)
  @E164()
  number?: string | null;

  @ApiPropertyOptional({
    type: String,
    maxLength: 255,
    nullable: true,
    example: 'sip:desk@pbx.example.com',
    description: 'A `sip:` or `sips:` URI, instead of a number (cold transfers only: a warm one dials a number)',
  })
  @ValidateIf((destination: TransferDestination) => destination.sip_uri != null)
  @Rule.ProhibitedWith('number')
  @Rule.ProhibitedWhen('mode', 'warm')
  @Rule.String()
  @Rule.MaxChars(255)
  @Rule.Pattern(SIP_URI_PATTERN)
  sip_uri?: string | null;

  @ApiPropertyOptional({
    enum: TRANSFER_MODES,
    default: 'cold',
    description:
      '`cold`: the caller is handed over at once; `warm`: the person is called first, briefed by the assistant, ' +
      'then joined to the caller',
  })
  @Rule.Sometimes()
  @Rule.OneOf(TRANSFER_MODES)
  mode?: TransferMode;

  @ApiPropertyOptional({
    type: String,
    maxLength: MAX_SPOKEN_MESSAGE,
    nullable: true,
    description: 'What the assistant says to the caller before it transfers them',
  })
  @Rule.OptionalText(MAX_SPOKEN_MESSAGE)
  message?: string | null;
}

/** Why a call ended, as Vapi's `endedReason` and Retell's `disconnection_reason` say it; null: not said. */
export const ENDED_REASONS = [
  'customer_hangup',
  'assistant_hangup',
  'transferred',
  'voicemail',
  'max_duration',
  'owner_hangup',
  'error',
] as const;
export type EndedReason = (typeof ENDED_REASONS)[number];

/** A destination as stored and read: both addresses named, one null. */
export interface StoredTransferDestination {
  name: string;
  description: string;
  number: string | null;
  sip_uri: string | null;
  mode: TransferMode;
  message: string | null;
}

export class TransferDestinationResponse implements StoredTransferDestination {
  @ApiProperty({ type: String }) name: string;
  @ApiProperty({ type: String }) description: string;
  @ApiProperty({ type: String, nullable: true }) number: string | null;
  @ApiProperty({ type: String, nullable: true }) sip_uri: string | null;
  @ApiProperty({ enum: TRANSFER_MODES }) mode: TransferMode;
  @ApiProperty({ type: String, nullable: true }) message: string | null;
}

export const toStoredTransferDestination = (destination: TransferDestination): StoredTransferDestination => ({
  name: destination.name,
  description: destination.description,
  number: destination.number ?? null,
  sip_uri: destination.number == null ? (destination.sip_uri ?? null) : null,
  mode: destination.mode ?? 'cold',
  message: destination.message ?? null,
});

/** Whether the assistant may end the call itself, and what it says first. */
export class EndCallSettings {
  @ApiPropertyOptional({ type: Boolean, default: true })
  @Rule.Sometimes()
  @Rule.Boolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: String,
    maxLength: MAX_SPOKEN_MESSAGE,
    nullable: true,
    example: 'Thank you for calling. Goodbye!',
    description: 'Said before the assistant hangs up; null: the model’s own words',
  })
  @Rule.OptionalText(MAX_SPOKEN_MESSAGE)
  message?: string | null;
}

export interface StoredEndCallSettings {
  enabled: boolean;
  message: string | null;
}

export class EndCallSettingsResponse implements StoredEndCallSettings {
  @ApiProperty({ type: Boolean }) enabled: boolean;
  @ApiProperty({ type: String, nullable: true }) message: string | null;
}

export const DEFAULT_END_CALL: StoredEndCallSettings = { enabled: true, message: null };

export const endCallSettingsOf = (request: EndCallSettings | null | undefined): StoredEndCallSettings => ({
  enabled: request?.enabled ?? DEFAULT_END_CALL.enabled,
  message: request?.message ?? null,
});

/** What the assistant does when a machine answers its call. */
export class VoicemailSettings {
  @ApiProperty({ enum: VOICEMAIL_ACTIONS, description: '`hangup` at once, or `leave_message` and then hang up' })
  @Rule.Required()
  @Rule.OneOf(VOICEMAIL_ACTIONS)
  action: (typeof VOICEMAIL_ACTIONS)[number];

  @ApiPropertyOptional({
    type: String,
    maxLength: MAX_SPOKEN_MESSAGE,
    nullable: true,
    example: 'Hi, this is Ada from Example Dental calling about your appointment. Please call us back.',
    description: 'Required with `leave_message`: left on the machine, `{{variables}}` filled in',
  })
  @ValidateIf((settings: VoicemailSettings) => settings.action === 'leave_message' || settings.message != null)
  @Rule.RequiredWhen('action', 'leave_message')
  @Rule.ProhibitedUnless('action', 'leave_message')
  @Rule.String()
  @Rule.MaxChars(MAX_SPOKEN_MESSAGE)
  message?: string | null;
}

export interface StoredVoicemailSettings {
  action: (typeof VOICEMAIL_ACTIONS)[number];
  message: string | null;
}

export class VoicemailSettingsResponse implements StoredVoicemailSettings {
  @ApiProperty({ enum: VOICEMAIL_ACTIONS }) action: (typeof VOICEMAIL_ACTIONS)[number];
  @ApiProperty({ type: String, nullable: true }) message: string | null;
}

/** Vapi's and Retell's default: a machine is hung up on. */
export const DEFAULT_VOICEMAIL: StoredVoicemailSettings = { action: 'hangup', message: null };

export const voicemailSettingsOf = (request: VoicemailSettings | null | undefined): StoredVoicemailSettings =>
  request ? { action: request.action, message: request.message ?? null } : DEFAULT_VOICEMAIL;

/** The built-in actions a session offers beside the assistant's tools. */
export const BUILT_IN_ACTION_TYPES = ['transfer_call', 'end_call', 'send_dtmf'] as const;

export class SessionTransferDestination {
  @ApiProperty({ type: String, example: 'billing_desk' }) name: string;
  @ApiProperty({ type: String }) description: string;
  @ApiProperty({ enum: TRANSFER_MODES }) mode: TransferMode;
  @ApiProperty({ type: String, nullable: true, description: 'Said to the caller before the transfer' })
  message: string | null;
}

/** A built-in action: what the runtime offers its model, and does through the service (or, for DTMF, the room). */
export class SessionAction {
  @ApiProperty({ type: String, example: 'transfer_call', description: 'The function name offered to the model' })
  name: string;
  @ApiProperty({ enum: BUILT_IN_ACTION_TYPES }) type: (typeof BUILT_IN_ACTION_TYPES)[number];
  @ApiProperty({ type: String }) description: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The arguments as JSON Schema, as a tool’s `parameters`',
  })
  parameters: Record<string, unknown>;
  @ApiPropertyOptional({
    type: [SessionTransferDestination],
    description: '`transfer_call`: where the call may go, by name (the numbers stay with the service)',
  })
  destinations?: SessionTransferDestination[];
  @ApiPropertyOptional({ type: String, nullable: true, description: '`end_call`: the goodbye to say first' })
  message?: string | null;
}

/** POST /internal/calls/{external_id}/transfer */
@RequestExample({ destination: 'billing_desk' })
export class TransferCallRequest {
  @ApiProperty({ type: String, maxLength: 64, example: 'billing_desk', description: 'A destination’s `name`' })
  @Rule.RequiredText(64)
  destination: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 256,
    description: 'The caller’s participant in the room; the room’s phone participant when absent',
  })
  @Rule.OptionalText(256)
  participant_identity?: string | null;

  @ApiPropertyOptional({
    type: String,
    maxLength: 4000,
    nullable: true,
    description: 'Warm transfers: what the assistant tells the person before they are joined (a summary of the call)',
  })
  @Rule.OptionalText(4000)
  summary?: string | null;
}

export const TRANSFER_STATUSES = ['transferred', 'failed', 'declined'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** A call's transfer as stored on the call (its last one) and in its `transfer` event. */
export interface StoredCallTransfer {
  destination: string;
  mode: TransferMode;
  status: TransferStatus;
  reason: string | null;
  at: string;
}

export class CallTransferRecord implements StoredCallTransfer {
  @ApiProperty({ type: String, example: 'billing_desk', description: 'The destination’s name' }) destination: string;
  @ApiProperty({ enum: TRANSFER_MODES }) mode: TransferMode;
  @ApiProperty({ enum: TRANSFER_STATUSES }) status: TransferStatus;
  @ApiProperty({ type: String, nullable: true, example: 'busy', description: 'Why it did not connect' })
  reason: string | null;
  @ApiProperty({ type: String, format: 'date-time' }) at: string;
}

export class CallTransferResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String, example: 'billing_desk' }) destination: string;
  @ApiProperty({ enum: TRANSFER_MODES }) mode: TransferMode;
  @ApiProperty({
    enum: TRANSFER_STATUSES,
    description:
      '`transferred`: the caller is with the person, the call is over for the assistant; `failed` or `declined`: ' +
      'the caller is still with the assistant, which says `message`',
  })
  status: (typeof TRANSFER_STATUSES)[number];
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'busy',
    description: 'Why it did not connect: busy, no-answer, declined, unreachable, refused, caller-gone, …',
  })
  reason: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'The line is busy.',
    description: 'What the assistant can say',
  })
  message: string | null;
}

export class CallTransferData {
  @ApiProperty({ type: CallTransferResponse }) transfer: CallTransferResponse;
}

export class CallTransferEnvelope {
  @ApiProperty({ type: String, example: 'The call was transferred.' }) message: string;
  @ApiProperty({ type: CallTransferData }) data: CallTransferData;
}

/** What the owner may tell a live call's runtime: end it, say words as they are, or add to the model's context. */
export const CALL_CONTROL_ACTIONS = ['hangup', 'say', 'instruct'] as const;
export type CallControlAction = (typeof CALL_CONTROL_ACTIONS)[number];

/** What the owner has said or instructed in one message: a few sentences, never a script. */
export const MAX_CONTROL_TEXT = 2000;

/** POST /user/calls/{id}/say and /user/calls/{id}/instruct */
@RequestExample({ text: 'One moment please, a colleague will join shortly.' })
export class CallControlTextRequest {
  @ApiProperty({ type: String, minLength: 1, maxLength: MAX_CONTROL_TEXT })
  @Rule.RequiredText(MAX_CONTROL_TEXT)
  @Rule.Pattern(/\S/)
  text: string;
}

/**
 * One message of the runtime's control stream (`GET /internal/calls/{external_id}/control`), sent as a server-sent
 * event `control` whose `id` is the message's: what the owner asked, in the order asked.
 */
export class CallControlMessage {
  @ApiProperty({ type: 'integer', description: 'The message’s id: the stream’s `Last-Event-ID` to resume after it' })
  id: number;
  @ApiProperty({
    enum: CALL_CONTROL_ACTIONS,
    description:
      '`hangup`: end the call now (then write the call’s final status); `say`: speak `text` as it is; `instruct`: add ' +
      '`text` to the model’s context as the owner’s instruction',
  })
  action: CallControlAction;
  @ApiPropertyOptional({ type: String, description: '`say` and `instruct`' })
  text?: string;
  @ApiProperty({ type: String, format: 'date-time' }) at: string;
}

export function toCallControlMessage(row: CallEventRow & { id: number }): CallControlMessage {
  const data = row.data as { action: CallControlAction; text?: string };
  return {
    id: row.id,
    action: data.action,
    ...(data.text === undefined ? {} : { text: data.text }),
    at: row.at.toISOString(),
  };
}
