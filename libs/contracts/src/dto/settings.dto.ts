import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';

export const DEFAULT_SERVER_TIMEOUT_MS = 2000;
export const MIN_SERVER_TIMEOUT_MS = 100;
export const MAX_SERVER_TIMEOUT_MS = 5000;

/** The ring-time hook's fields, as a phone number and the account's settings take them. */
export class ServerHookFields {
  @ApiPropertyOptional({
    type: String,
    format: 'uri',
    maxLength: 2048,
    nullable: true,
    description:
      'Asked at ring time which assistant takes an inbound call (`call.assistant_request`, signed); `null` clears it',
    example: 'https://crm.example.com/voice/assistant-request',
  })
  @Rule.OptionalText(2048)
  @Rule.HttpUrl()
  server_url?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: MIN_SERVER_TIMEOUT_MS,
    maximum: MAX_SERVER_TIMEOUT_MS,
    default: DEFAULT_SERVER_TIMEOUT_MS,
    description: 'How long the session waits for the server’s answer before the number’s own assistant answers',
  })
  @Rule.Sometimes()
  @Rule.Integer()
  @Rule.Between(MIN_SERVER_TIMEOUT_MS, MAX_SERVER_TIMEOUT_MS)
  server_timeout_ms?: number;
}

/** The hook's fields in a response, with the signing secret, shown to its owner only. */
export class ServerHookResponse {
  @ApiProperty({ type: String, nullable: true }) server_url: string | null;
  @ApiProperty({ type: 'integer', example: DEFAULT_SERVER_TIMEOUT_MS }) server_timeout_ms: number;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Signs the hook’s requests (`whsec_...`); made when `server_url` is first set; owner only',
  })
  server_secret: string | null;
}

/** PUT /user/settings: any subset; omitted fields stay as they are. */
export class UpdateSettingsRequest extends ServerHookFields {}

/** The account's settings: today its default ring-time hook, for numbers that name none of their own. */
export class SettingsResponse extends ServerHookResponse {}

export class SettingsEnvelope {
  @ApiProperty({ type: SettingsResponse }) data: SettingsResponse;
}

export class SettingsMessageEnvelope extends SettingsEnvelope {
  @ApiProperty({ type: String, example: 'Settings updated successfully.' }) message: string;
}

/** The hook as stored, its secret already opened by the service. */
export interface ServerHookLike {
  serverUrl: string | null;
  serverTimeoutMs: number;
  serverSecret: string | null;
}

export function toServerHookResponse(hook: ServerHookLike): ServerHookResponse {
  return { server_url: hook.serverUrl, server_timeout_ms: hook.serverTimeoutMs, server_secret: hook.serverSecret };
}
