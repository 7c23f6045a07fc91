import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';

/**
 * The providers the reference agent (examples/livekit-agent) builds a pipeline from; `livekit` is LiveKit Inference,
 * whose model ids read `provider/model` (`deepgram/nova-3`, `openai/gpt-4.1-mini`, `cartesia/sonic-3`).
 */
export const LLM_PROVIDERS = ['openai', 'livekit'] as const;
export const TRANSCRIBER_PROVIDERS = ['deepgram', 'openai', 'livekit'] as const;
export const VOICE_PROVIDERS = ['openai', 'livekit'] as const;
/** OpenAI's range for sampling temperature, and for speech speed (Cartesia's and others' lie within it). */
export const MIN_TEMPERATURE = 0;
export const MAX_TEMPERATURE = 2;
export const MIN_VOICE_SPEED = 0.25;
export const MAX_VOICE_SPEED = 4;
/** A BCP 47 language tag (`en`, `en-US`, `pt-BR`), or `multi`: the caller may speak any language. */
const SPOKEN_LANGUAGE = /^(multi|[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*)$/;

/** The assistant's LLM; null: the agent's own. */
export class ModelSettings {
  @ApiProperty({ enum: LLM_PROVIDERS, example: 'openai' })
  @Rule.Required()
  @Rule.OneOf(LLM_PROVIDERS)
  provider: (typeof LLM_PROVIDERS)[number];

  @ApiPropertyOptional({
    type: String,
    maxLength: 255,
    nullable: true,
    example: 'gpt-4.1-mini',
    description: 'The provider’s model id; null: the agent’s model for that provider',
  })
  @Rule.OptionalText(255)
  model?: string | null;

  @ApiPropertyOptional({
    type: Number,
    minimum: MIN_TEMPERATURE,
    maximum: MAX_TEMPERATURE,
    nullable: true,
    example: 0.4,
    description: 'Sampling temperature; null: the provider’s default',
  })
  @Rule.Optional()
  @Rule.Numeric()
  @Rule.Between(MIN_TEMPERATURE, MAX_TEMPERATURE)
  temperature?: number | null;
}

/** The assistant's speech-to-text; null: the agent's own. */
export class TranscriberSettings {
  @ApiProperty({ enum: TRANSCRIBER_PROVIDERS, example: 'deepgram' })
  @Rule.Required()
  @Rule.OneOf(TRANSCRIBER_PROVIDERS)
  provider: (typeof TRANSCRIBER_PROVIDERS)[number];

  @ApiPropertyOptional({
    type: String,
    maxLength: 255,
    nullable: true,
    example: 'nova-3',
    description: 'The provider’s model id; null: the agent’s model for that provider',
  })
  @Rule.OptionalText(255)
  model?: string | null;

  @ApiPropertyOptional({
    type: String,
    maxLength: 35,
    nullable: true,
    example: 'en-US',
    description: 'A BCP 47 tag, or `multi`; null: the assistant’s languages (`multi` when it has several)',
  })
  @Rule.OptionalText(35)
  @Rule.Pattern(SPOKEN_LANGUAGE)
  language?: string | null;
}

/** The assistant's text-to-speech; null: the agent's own provider, with the assistant's `voice_id`. */
export class VoiceSettings {
  @ApiProperty({ enum: VOICE_PROVIDERS, example: 'openai' })
  @Rule.Required()
  @Rule.OneOf(VOICE_PROVIDERS)
  provider: (typeof VOICE_PROVIDERS)[number];

  @ApiPropertyOptional({
    type: String,
    maxLength: 255,
    nullable: true,
    example: 'alloy',
    description: 'The provider’s voice; the assistant’s `voice_id` under another name (sent, it sets both)',
  })
  @Rule.OptionalText(255)
  voice_id?: string | null;

  @ApiPropertyOptional({
    type: Number,
    minimum: MIN_VOICE_SPEED,
    maximum: MAX_VOICE_SPEED,
    nullable: true,
    example: 1.1,
    description: 'Speech speed, 1 the voice’s own; null: the provider’s default',
  })
  @Rule.Optional()
  @Rule.Numeric()
  @Rule.Between(MIN_VOICE_SPEED, MAX_VOICE_SPEED)
  speed?: number | null;
}

export interface StoredModelSettings {
  provider: (typeof LLM_PROVIDERS)[number];
  model: string | null;
  temperature: number | null;
}

export interface StoredTranscriberSettings {
  provider: (typeof TRANSCRIBER_PROVIDERS)[number];
  model: string | null;
  language: string | null;
}

/** The voice id itself stays in the assistant's `voice_id` column: one value, two names. */
export interface StoredVoiceSettings {
  provider: (typeof VOICE_PROVIDERS)[number];
  speed: number | null;
}

export class ModelSettingsResponse implements StoredModelSettings {
  @ApiProperty({ enum: LLM_PROVIDERS }) provider: (typeof LLM_PROVIDERS)[number];
  @ApiProperty({ type: String, nullable: true }) model: string | null;
  @ApiProperty({ type: Number, nullable: true }) temperature: number | null;
}

export class TranscriberSettingsResponse implements StoredTranscriberSettings {
  @ApiProperty({ enum: TRANSCRIBER_PROVIDERS }) provider: (typeof TRANSCRIBER_PROVIDERS)[number];
  @ApiProperty({ type: String, nullable: true }) model: string | null;
  @ApiProperty({ type: String, nullable: true }) language: string | null;
}

export class VoiceSettingsResponse {
  @ApiProperty({ enum: VOICE_PROVIDERS }) provider: (typeof VOICE_PROVIDERS)[number];
  @ApiProperty({ type: String, nullable: true, description: 'The same as the assistant’s `voice_id`' })
  voice_id: string | null;
  @ApiProperty({ type: Number, nullable: true }) speed: number | null;
}

export const modelSettingsOf = (request: ModelSettings | null | undefined): StoredModelSettings | null =>
  request
    ? { provider: request.provider, model: request.model ?? null, temperature: request.temperature ?? null }
    : null;

export const transcriberSettingsOf = (
  request: TranscriberSettings | null | undefined,
): StoredTranscriberSettings | null =>
  request ? { provider: request.provider, model: request.model ?? null, language: request.language ?? null } : null;

export const voiceSettingsOf = (request: VoiceSettings | null | undefined): StoredVoiceSettings | null =>
  request ? { provider: request.provider, speed: request.speed ?? null } : null;

/** The stored voice with the assistant's voice id, as answers show it. */
export const toVoiceSettingsResponse = (
  voice: StoredVoiceSettings | null,
  voiceId: string | null,
): VoiceSettingsResponse | null => voice && { provider: voice.provider, voice_id: voiceId, speed: voice.speed };
