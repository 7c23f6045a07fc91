import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';
import { ScalarMap } from './assistant.dto';
import { CallResponse } from './call.dto';
import { type CallRow, toCallResponse } from './call-response';
import { RequestExample } from './request-example';

/** POST /user/assistant/{id}/web-call: a conversation with the assistant from a browser, with no phone involved. */
@RequestExample({ variables: { customer_name: 'Ada' } })
export class StartWebCallRequest {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { customer_name: 'Ada' },
    description: 'The call’s own variables (text, number or boolean), over the assistant’s',
  })
  @Rule.Sometimes()
  @ScalarMap()
  variables?: Record<string, string | number | boolean | null>;
}

export class WebCallResponse {
  @ApiProperty({ type: CallResponse, description: 'The call: `type: web`, `status: initiated`, no phone numbers' })
  call: CallResponse;

  @ApiProperty({
    type: String,
    example: 'wss://example.livekit.cloud',
    description: 'Where the browser connects (LiveKit’s client SDK `room.connect(livekit_url, participant_token)`)',
  })
  livekit_url: string;

  @ApiProperty({ type: String, example: 'call-0b5f1c3e-8d5a-4a4e-9a43-4a7c1b9f9c6e', description: 'The call’s room' })
  room: string;

  @ApiProperty({
    type: String,
    example: 'eyJhbGciOiJIUzI1NiJ9.eyJ2aWRlbyI6eyJyb29tSm9pbiI6dHJ1ZX19.c2lnbmF0dXJl',
    description:
      'A LiveKit access token that may join this room only (publish and subscribe, nothing else), as the ' +
      'participant `web-<call id>`; hand it to the browser, never the API key',
  })
  participant_token: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    example: '2026-01-02T03:14:05.000Z',
    description: 'Until when the token may be used to join (at most 10 minutes); a joined person stays in the call',
  })
  expires_at: string;
}

export class WebCallEnvelope {
  @ApiProperty({ type: String, example: 'Web call started.' }) message: string;
  @ApiProperty({ type: WebCallResponse }) data: WebCallResponse;
}

/** The answer of a web call's start: the call and how its person joins it. */
export function toWebCallEnvelope(
  row: CallRow,
  join: { url: string; token: string; expiresAt: Date },
): WebCallEnvelope {
  return {
    message: 'Web call started.',
    data: {
      call: toCallResponse(row),
      livekit_url: join.url,
      room: row.external_id,
      participant_token: join.token,
      expires_at: join.expiresAt.toISOString(),
    },
  };
}
