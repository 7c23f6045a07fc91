import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';
import { RequestExample } from './request-example';
import type { CallEventRow } from './runtime.dto';

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
