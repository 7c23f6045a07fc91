import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateBy, ValidateIf } from 'class-validator';
import {
  type AnalysisPlan,
  AnalysisPlanRequest,
  AnalysisPlanResponse,
  DEFAULT_ANALYSIS_PLAN,
} from './call-analysis.dto';
import {
  EndCallSettings,
  EndCallSettingsResponse,
  DEFAULT_END_CALL,
  DEFAULT_VOICEMAIL,
  MAX_TRANSFER_DESTINATIONS,
  type StoredEndCallSettings,
  type StoredTransferDestination,
  type StoredVoicemailSettings,
  TransferDestination,
  TransferDestinationResponse,
  VoicemailSettings,
  VoicemailSettingsResponse,
} from './call-control.dto';
import { PageQuery } from './pagination.dto';
import { COLORS } from './organisation.dto';
import { Rule } from '../validation';
import { RequestExample } from './request-example';
import {
  ModelSettings,
  ModelSettingsResponse,
  type StoredModelSettings,
  type StoredTranscriberSettings,
  type StoredVoiceSettings,
  TranscriberSettings,
  TranscriberSettingsResponse,
  VoiceSettings,
  VoiceSettingsResponse,
  toVoiceSettingsResponse,
} from './voice-pipeline.dto';

export const ASSISTANT_TYPES = ['inbound', 'outbound'] as const;
export const ASSISTANT_STATUSES = ['active', 'inactive'] as const;
/** A post-call field's type: JSON Schema's scalars, one of given texts (`enum`), or a list of either (`array`). */
export const POST_CALL_FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'enum', 'array'] as const;
/** What a list field's items may be: no list of lists. */
export const POST_CALL_ITEM_TYPES = ['string', 'number', 'integer', 'boolean', 'enum'] as const;
/** An enum's values: each at most this long, at most this many a field and in the whole schema. */
export const MAX_ENUM_VALUE_LENGTH = 100;
export const MAX_ENUM_VALUES = 100;
/**
 * Strict structured outputs refuse a schema of more than 1000 enum values, or whose names and values total more than
 * 120,000 characters (OpenAI's Structured Outputs guide): 500 values of at most 100 characters and 100 names of 64
 * keep every post-call schema within both.
 */
export const MAX_SCHEMA_ENUM_VALUES = 500;
export const DEFAULT_ASSISTANTS_PER_PAGE = 10;
export const MAX_LINKED_ITEMS = 100;
export const MAX_VARIABLES = 100;
const TIMEZONES = new Set<string>([...Intl.supportedValuesOf('timeZone'), 'UTC']);

/** An IANA time zone name, e.g. `Europe/Berlin`. */
export const TimeZone = () =>
  ValidateBy(
    { name: 'timeZone', validator: { validate: (value) => typeof value === 'string' && TIMEZONES.has(value) } },
    { message: 'The :attribute field must be a valid timezone.' },
  );

/** Key-value data for the call: at most MAX_VARIABLES keys (64 characters at most) of scalar values. */
export function isScalarMap(value: unknown): value is Record<string, string | number | boolean | null> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value).length <= MAX_VARIABLES &&
    Object.entries(value).every(
      ([key, item]) =>
        key.length <= 64 &&
        (item === null ||
          typeof item === 'number' ||
          typeof item === 'boolean' ||
          (typeof item === 'string' && item.length <= 4096)),
    )
  );
}

export const ScalarMap = () =>
  ValidateBy(
    { name: 'scalarMap', validator: { validate: isScalarMap } },
    { message: `The :attribute field must be an object of at most ${MAX_VARIABLES} text, number or boolean values.` },
  );

/** `voice_id` beside `voice.voice_id`: one value under two names, so both sent must agree. */
const SameAsVoiceVoiceId = () =>
  ValidateBy(
    {
      name: 'sameAsVoiceVoiceId',
      validator: {
        validate: (value, args) => {
          const voice = (args?.object as { voice?: { voice_id?: unknown } | null }).voice;
          return voice?.voice_id === undefined || voice.voice_id === value;
        },
      },
    },
    { message: 'The :attribute field must match voice.voice_id.' },
  );

/** `values` of an `enum` field (or list items): required for `enum`, prohibited otherwise. */
const EnumValues = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      isArray: true,
      minItems: 1,
      maxItems: MAX_ENUM_VALUES,
      maxLength: MAX_ENUM_VALUE_LENGTH,
      description: 'Required with `type: enum`, and only then: the values the field may take',
    }),
    ValidateIf((field: { type?: unknown; values?: unknown }) => field.type === 'enum' || field.values != null),
    Rule.RequiredWhen('type', 'enum'),
    Rule.ProhibitedUnless('type', 'enum'),
    Rule.Array(),
    Rule.ArrayMin(1),
    Rule.ArrayMax(MAX_ENUM_VALUES),
    Rule.EachText(MAX_ENUM_VALUE_LENGTH),
    Rule.DistinctBy(),
  );

/** What a list field holds. */
export class PostCallItems {
  @ApiProperty({ enum: POST_CALL_ITEM_TYPES })
  @Rule.Required()
  @Rule.OneOf(POST_CALL_ITEM_TYPES)
  type: (typeof POST_CALL_ITEM_TYPES)[number];

  @EnumValues()
  values?: string[];
}

export class PostCallField {
  @ApiProperty({ type: String, maxLength: 64 })
  @Rule.RequiredText(64)
  @Rule.Pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)
  name: string;

  @ApiProperty({
    enum: POST_CALL_FIELD_TYPES,
    description: '`enum` takes one of `values`; `array` a list of `items`',
  })
  @Rule.Required()
  @Rule.OneOf(POST_CALL_FIELD_TYPES)
  type: (typeof POST_CALL_FIELD_TYPES)[number];

  @ApiProperty({ type: String, maxLength: 1000 })
  @Rule.RequiredText(1000)
  description: string;

  @EnumValues()
  values?: string[];

  @ApiPropertyOptional({ type: PostCallItems, description: 'Required with `type: array`, and only then' })
  @ValidateIf((field: PostCallField) => field.type === 'array' || field.items != null)
  @Rule.RequiredWhen('type', 'array')
  @Rule.ProhibitedUnless('type', 'array')
  @Rule.Nested(() => PostCallItems)
  items?: PostCallItems;
}

/** Every enum value of a post-call schema, its fields' and their items'. */
export function enumValueCount(schema: unknown): number {
  if (!Array.isArray(schema)) return 0;
  const count = (field: unknown) => {
    const values = (field as { values?: unknown } | null)?.values;
    return Array.isArray(values) ? values.length : 0;
  };
  return schema.reduce<number>((sum, field) => sum + count(field) + count((field as { items?: unknown })?.items), 0);
}

/** The whole schema's enum values within MAX_SCHEMA_ENUM_VALUES. */
const SchemaEnumValues = () =>
  ValidateBy(
    { name: 'schemaEnumValues', validator: { validate: (value) => enumValueCount(value) <= MAX_SCHEMA_ENUM_VALUES } },
    { message: `The :attribute field must not have more than ${MAX_SCHEMA_ENUM_VALUES} enum values in all.` },
  );

/** A list of ids an assistant links to (its languages, tools, labels): a list sent replaces the old one. */
const LinkedIds = () =>
  // In the order stacked decorators apply (the lowest first), so the rules run as they did written out on each field.
  applyDecorators(
    Rule.IdList(MAX_LINKED_ITEMS),
    Rule.Sometimes(),
    ApiPropertyOptional({
      type: 'integer',
      isArray: true,
      maxItems: MAX_LINKED_ITEMS,
      description: 'Replaces the list; `[]` clears it',
    }),
  );

/** Everything but the three fields required on create. */
class AssistantOptionalFields {
  @LinkedIds()
  secondary_language_ids?: number[];

  @ApiPropertyOptional({
    type: String,
    maxLength: 255,
    nullable: true,
    description: 'A voice of the speech provider (`voice.provider`, else the agent’s); the same as `voice.voice_id`',
  })
  @Rule.OptionalText(255)
  @SameAsVoiceVoiceId()
  voice_id?: string | null;

  @ApiPropertyOptional({
    type: ModelSettings,
    nullable: true,
    description: 'The LLM the assistant thinks with; `null` (the default): the agent’s own',
  })
  @Rule.Optional()
  @Rule.Nested(() => ModelSettings)
  model?: ModelSettings | null;

  @ApiPropertyOptional({
    type: TranscriberSettings,
    nullable: true,
    description: 'The speech-to-text the assistant hears with; `null` (the default): the agent’s own',
  })
  @Rule.Optional()
  @Rule.Nested(() => TranscriberSettings)
  transcriber?: TranscriberSettings | null;

  @ApiPropertyOptional({
    type: VoiceSettings,
    nullable: true,
    description: 'The text-to-speech the assistant speaks with; `null` (the default): the agent’s own, with `voice_id`',
  })
  @Rule.Optional()
  @Rule.Nested(() => VoiceSettings)
  voice?: VoiceSettings | null;

  @ApiPropertyOptional({ type: String, default: 'UTC', example: 'Europe/Berlin' })
  @Rule.Sometimes()
  @Rule.Required()
  @TimeZone()
  timezone?: string;

  @ApiPropertyOptional({ type: String, maxLength: 200, nullable: true })
  @Rule.OptionalText(200)
  initial_message?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: 65536, nullable: true })
  @Rule.OptionalText(65536)
  system_prompt?: string | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true })
  @Rule.Optional()
  @Rule.Id()
  knowledgebase_id?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true })
  @Rule.Optional()
  @Rule.Id()
  phone_number_id?: number | null;

  @LinkedIds()
  tool_ids?: number[];

  @ApiPropertyOptional({ type: 'integer', nullable: true, description: '`null` takes it out of its folder' })
  @Rule.Optional()
  @Rule.Id()
  folder_id?: number | null;

  @LinkedIds()
  label_ids?: number[];

  @ApiPropertyOptional({ type: String, format: 'uri', maxLength: 2048, nullable: true })
  @Rule.OptionalText(2048)
  @Rule.HttpUrl()
  webhook_url?: string | null;

  @ApiPropertyOptional({ type: Boolean, default: false })
  @Rule.Sometimes()
  @Rule.Boolean()
  is_webhook_active?: boolean;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Default call variables' })
  @Rule.Sometimes()
  @ScalarMap()
  variables?: Record<string, string | number | boolean | null>;

  @ApiPropertyOptional({ type: [PostCallField], maxItems: MAX_LINKED_ITEMS })
  @Rule.Sometimes()
  @Rule.ArrayMax(MAX_LINKED_ITEMS)
  @Rule.EachNested(() => PostCallField)
  @Rule.DistinctBy('name')
  @SchemaEnumValues()
  post_call_schema?: PostCallField[];

  @ApiPropertyOptional({
    type: AnalysisPlanRequest,
    nullable: true,
    description:
      'The post-call analysis plan: replaces the stored one, what it leaves out taking its default; `null` restores ' +
      'the defaults (a summary, the `post_call_schema` fields, a pass/fail grade)',
  })
  @Rule.Optional()
  @Rule.Nested(() => AnalysisPlanRequest)
  analysis?: AnalysisPlanRequest | null;

  @ApiPropertyOptional({
    type: [TransferDestination],
    maxItems: MAX_TRANSFER_DESTINATIONS,
    description: 'Where the assistant may transfer a call, and nowhere else. Replaces the list; `[]` clears it',
  })
  @Rule.Sometimes()
  @Rule.ArrayMax(MAX_TRANSFER_DESTINATIONS)
  @Rule.EachNested(() => TransferDestination)
  @Rule.DistinctBy('name')
  transfer_destinations?: TransferDestination[];

  @ApiPropertyOptional({
    type: EndCallSettings,
    nullable: true,
    description: 'Whether the assistant may end the call itself (default: yes); `null` restores the default',
  })
  @Rule.Optional()
  @Rule.Nested(() => EndCallSettings)
  end_call?: EndCallSettings | null;

  @ApiPropertyOptional({
    type: VoicemailSettings,
    nullable: true,
    description: 'What the assistant does when a machine answers (default: hang up); `null` restores the default',
  })
  @Rule.Optional()
  @Rule.Nested(() => VoicemailSettings)
  voicemail?: VoicemailSettings | null;

  @ApiPropertyOptional({ type: 'integer', minimum: 10, maximum: 7200, default: 600, description: 'Seconds' })
  @Rule.Sometimes()
  @Rule.Integer()
  @Rule.Between(10, 7200)
  max_duration?: number;

  @ApiPropertyOptional({ type: Boolean, default: false })
  @Rule.Sometimes()
  @Rule.Boolean()
  record?: boolean;

  @ApiPropertyOptional({ enum: ASSISTANT_STATUSES, default: 'active' })
  @Rule.Sometimes()
  @Rule.OneOf(ASSISTANT_STATUSES)
  status?: 'active' | 'inactive';
}

@RequestExample({
  name: 'Spring follow-up caller',
  type: 'outbound',
  language_id: 1,
  knowledgebase_id: 1,
  phone_number_id: 1,
  tool_ids: [1],
  model: { provider: 'openai', model: 'gpt-4.1-mini', temperature: 0.4 },
  transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en-US' },
  voice: { provider: 'openai', voice_id: 'alloy', speed: 1.1 },
  transfer_destinations: [
    {
      name: 'billing_desk',
      description: 'The caller asks about an invoice or a payment',
      number: '+14155550142',
      mode: 'cold',
    },
  ],
})
export class CreateAssistantRequest extends AssistantOptionalFields {
  @ApiProperty({ type: String, maxLength: 255 })
  @Rule.RequiredText()
  name: string;

  @ApiProperty({ enum: ASSISTANT_TYPES })
  @Rule.Required()
  @Rule.OneOf(ASSISTANT_TYPES)
  type: 'inbound' | 'outbound';

  @ApiProperty({ type: 'integer' })
  @Rule.Required()
  @Rule.Id()
  language_id: number;
}

export class UpdateAssistantRequest extends AssistantOptionalFields {
  @ApiPropertyOptional({ type: String, maxLength: 255 })
  @Rule.Sometimes()
  @Rule.RequiredText()
  name?: string;

  @ApiPropertyOptional({ enum: ASSISTANT_TYPES })
  @Rule.Sometimes()
  @Rule.OneOf(ASSISTANT_TYPES)
  type?: 'inbound' | 'outbound';

  @ApiPropertyOptional({ type: 'integer' })
  @Rule.Sometimes()
  @Rule.Id()
  language_id?: number;
}

export class AssistantListQuery extends PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_ASSISTANTS_PER_PAGE })
  @Rule.DecimalInteger()
  @Rule.Between(1, 100)
  override per_page: number = DEFAULT_ASSISTANTS_PER_PAGE;

  @ApiPropertyOptional({ type: 'integer', description: 'Only assistants in this folder' })
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(1, Rule.MAX_ID)
  folder_id?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'Only assistants with this label' })
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(1, Rule.MAX_ID)
  label_id?: number;

  @ApiPropertyOptional({ type: String, maxLength: 255, description: 'Part of the name, any letter case' })
  @Rule.OptionalText()
  search?: string;
}

class LinkedItem {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
}

class LinkedColourItem extends LinkedItem {
  @ApiProperty({ enum: COLORS, nullable: true }) color: string | null;
}

export class AssistantResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
  @ApiProperty({ enum: ASSISTANT_TYPES }) type: string;
  @ApiProperty({ type: 'integer' }) language_id: number;
  @ApiProperty({ type: 'integer', isArray: true }) secondary_language_ids: number[];
  @ApiProperty({ type: String, nullable: true }) voice_id: string | null;
  @ApiProperty({ type: ModelSettingsResponse, nullable: true }) model: ModelSettingsResponse | null;
  @ApiProperty({ type: TranscriberSettingsResponse, nullable: true }) transcriber: TranscriberSettingsResponse | null;
  @ApiProperty({ type: VoiceSettingsResponse, nullable: true }) voice: VoiceSettingsResponse | null;
  @ApiProperty({ type: String }) timezone: string;
  @ApiProperty({ type: String, nullable: true }) initial_message: string | null;
  @ApiProperty({ type: String, nullable: true }) system_prompt: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) knowledgebase_id: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) phone_number_id: number | null;
  @ApiProperty({ type: 'integer', isArray: true }) tool_ids: number[];
  @ApiProperty({ type: [LinkedItem] }) tools: LinkedItem[];
  @ApiProperty({ type: 'integer', nullable: true }) folder_id: number | null;
  @ApiProperty({ type: LinkedColourItem, nullable: true }) folder: LinkedColourItem | null;
  @ApiProperty({ type: 'integer', isArray: true }) label_ids: number[];
  @ApiProperty({ type: [LinkedColourItem] }) labels: LinkedColourItem[];
  @ApiProperty({ type: String, nullable: true }) webhook_url: string | null;
  @ApiProperty({ type: Boolean }) is_webhook_active: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Signs webhook deliveries (`whsec_...`); owner only' })
  webhook_secret: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) variables: Record<string, unknown>;
  @ApiProperty({ type: [PostCallField] }) post_call_schema: PostCallField[];
  @ApiProperty({ type: AnalysisPlanResponse }) analysis: AnalysisPlanResponse;
  @ApiProperty({ type: [TransferDestinationResponse] }) transfer_destinations: TransferDestinationResponse[];
  @ApiProperty({ type: EndCallSettingsResponse }) end_call: EndCallSettingsResponse;
  @ApiProperty({ type: VoicemailSettingsResponse }) voicemail: VoicemailSettingsResponse;
  @ApiProperty({ type: 'integer' }) max_duration: number;
  @ApiProperty({ type: Boolean }) record: boolean;
  @ApiProperty({ enum: ASSISTANT_STATUSES }) status: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class AssistantEnvelope {
  @ApiProperty({ type: AssistantResponse }) data: AssistantResponse;
}

export class AssistantMessageEnvelope extends AssistantEnvelope {
  @ApiProperty({ type: String }) message: string;
}

/** An assistant as stored (libs/database's `Assistant`), read by the mapper below. */
export interface AssistantLike {
  id: number;
  name: string;
  type: string;
  languageId: number;
  voiceId: string | null;
  model: StoredModelSettings | null;
  transcriber: StoredTranscriberSettings | null;
  voice: StoredVoiceSettings | null;
  timezone: string;
  initialMessage: string | null;
  systemPrompt: string | null;
  knowledgebaseId: number | null;
  phoneNumberId: number | null;
  folderId: number | null;
  webhookUrl: string | null;
  isWebhookActive: boolean;
  variables: Record<string, unknown>;
  postCallSchema: PostCallField[];
  analysis: AnalysisPlan | null;
  transferDestinations: StoredTransferDestination[];
  endCall: StoredEndCallSettings | null;
  voicemail: StoredVoicemailSettings | null;
  maxDuration: number;
  record: boolean;
  status: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What one assistant links to: read for a whole page of them at once, then handed over one assistant's worth. */
export interface AssistantLinksLike {
  secondaryLanguageIds: number[];
  tools: LinkedItem[];
  labels: LinkedColourItem[];
  folder: LinkedColourItem | null;
}

/** `webhookSecret` is passed opened: only the owner ever receives an assistant. */
export function toAssistantResponse(
  row: AssistantLike,
  links: AssistantLinksLike,
  webhookSecret: string | null,
): AssistantResponse {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    language_id: row.languageId,
    secondary_language_ids: links.secondaryLanguageIds,
    voice_id: row.voiceId,
    model: row.model,
    transcriber: row.transcriber,
    voice: toVoiceSettingsResponse(row.voice, row.voiceId),
    timezone: row.timezone,
    initial_message: row.initialMessage,
    system_prompt: row.systemPrompt,
    knowledgebase_id: row.knowledgebaseId,
    phone_number_id: row.phoneNumberId,
    tool_ids: links.tools.map((tool) => tool.id),
    tools: links.tools,
    folder_id: row.folderId,
    folder: links.folder,
    label_ids: links.labels.map((label) => label.id),
    labels: links.labels,
    webhook_url: row.webhookUrl,
    is_webhook_active: row.isWebhookActive,
    webhook_secret: webhookSecret,
    variables: row.variables,
    post_call_schema: row.postCallSchema,
    analysis: row.analysis ?? DEFAULT_ANALYSIS_PLAN,
    transfer_destinations: row.transferDestinations,
    end_call: row.endCall ?? DEFAULT_END_CALL,
    voicemail: row.voicemail ?? DEFAULT_VOICEMAIL,
    max_duration: row.maxDuration,
    record: row.record,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
