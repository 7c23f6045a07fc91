import { Body, Controller, Param } from '@nestjs/common';
import { ApiBadGatewayResponse, ApiCreatedResponse, ApiOperation } from '@nestjs/swagger';
import { Errors, MessageResponse, StartWebCallRequest, WebCallEnvelope } from '@app/contracts';
import { ApiCallLimit, ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { UserPost } from '../idempotency/user-post.decorator';
import { WebCallsService } from './web-calls.service';

const WEB_CALL_DESCRIPTION =
  'Writes a call of `type: web` (no phone numbers), opens its LiveKit room with the agent dispatched into it (its ' +
  'dispatch metadata carries the call’s `external_id`), and answers the LiveKit URL, the room and a participant ' +
  'token for the browser: it may join this room only, to publish and subscribe, within `expires_at` (at most 10 ' +
  'minutes). Counts against the account’s limit of calls in progress. Keep the API key on a server: hand the ' +
  'browser the token alone.';

@ApiUserResource('Calls')
@Controller('user')
export class WebCallsController {
  constructor(private readonly webCalls: WebCallsService) {}

  @UserPost('assistant/:id/web-call')
  @ApiOperation({
    operationId: 'startWebCall',
    summary: 'Talk to an assistant from a browser: a web call and a token to join its room',
    description: WEB_CALL_DESCRIPTION,
  })
  @ApiCreatedResponse({ type: WebCallEnvelope })
  @ApiValidatedInput()
  @ApiNotFoundAs('message', 'Assistant not found.')
  @ApiCallLimit('The account has as many calls in progress as it may; nothing was started, try again when one ends')
  @ApiBadGatewayResponse({
    type: MessageResponse,
    description: 'The telephony provider could not open the room; nothing was started (no call, no slot taken)',
  })
  start(
    @CurrentUser() user: AuthenticatedUser,
    @Param('id', new ResourceIdPipe(Errors.assistantNotFound)) id: number,
    @Body() body: StartWebCallRequest,
  ): Promise<WebCallEnvelope> {
    return this.webCalls.start(user, id, body);
  }
}
