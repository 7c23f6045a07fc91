import { Body, Controller, Delete, Get, HttpCode, Param, Query, Req } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import type { Request } from 'express';
import {
  ApiLengthAwarePage,
  CallAnalysisQueuedResponse,
  CallEnvelope,
  CallEventResponse,
  CallListQuery,
  CallResponse,
  Errors,
  LengthAwarePage,
  MakeCallRequest,
  MakeCallResponse,
  MessageResponse,
  PageQuery,
} from '@app/contracts';
import {
  ApiCallLimit,
  ApiNotFoundAs,
  ApiUserResource,
  ApiValidatedInput,
  ApiValidatedQuery,
  ResourceIdPipe,
} from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { CallsService } from './calls.service';
import { UserPost } from '../idempotency/user-post.decorator';

const CallId = () => Param('id', new ResourceIdPipe(Errors.callNotFound));

@ApiUserResource('Calls')
@Controller('user')
export class CallsController {
  constructor(private readonly calls: CallsService) {}

  @Get('calls')
  @ApiOperation({ operationId: 'listCalls', summary: 'List calls, newest first, with filters' })
  @ApiLengthAwarePage(CallResponse)
  @ApiValidatedQuery()
  list(
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: CallListQuery,
    @Req() request: Request,
  ): Promise<LengthAwarePage<CallResponse>> {
    return this.calls.list(user, query, request);
  }

  @Get('calls/:id')
  @ApiOperation({ operationId: 'getCall', summary: 'Read a call' })
  @ApiOkResponse({ type: CallEnvelope })
  @ApiNotFoundAs('message', 'Call not found.')
  get(@CurrentUser() user: AuthenticatedUser, @CallId() id: number): Promise<CallEnvelope> {
    return this.calls.get(user, id);
  }

  @UserPost('make_call')
  @ApiOperation({ operationId: 'makeCall', summary: 'Place one outbound call now, from the assistant’s number' })
  @ApiCreatedResponse({ type: MakeCallResponse })
  @ApiValidatedInput()
  @ApiCallLimit('The account has as many calls in progress as it may; nothing was placed, try again when one ends')
  makeCall(@CurrentUser() user: AuthenticatedUser, @Body() body: MakeCallRequest): Promise<MakeCallResponse> {
    return this.calls.makeCall(user, body);
  }

  @Get('calls/:id/events')
  @ApiOperation({
    operationId: 'listCallEvents',
    summary: 'The call’s transcript turns, notes and tool invocations, in the order they happened',
  })
  @ApiLengthAwarePage(CallEventResponse)
  @ApiValidatedQuery()
  @ApiNotFoundAs('message', 'Call not found.')
  events(
    @CurrentUser() user: AuthenticatedUser,
    @CallId() id: number,
    @Query() query: PageQuery,
    @Req() request: Request,
  ): Promise<LengthAwarePage<CallEventResponse>> {
    return this.calls.events(user, id, query, request);
  }

  @UserPost('calls/:id/analysis')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'reanalyseCall',
    summary: 'Run the call’s post-call analysis again, on its assistant’s plan as it is now',
  })
  @ApiAcceptedResponse({
    type: CallAnalysisQueuedResponse,
    description: 'Queued: the call, its `analysis` pending; `call.analyzed` follows when it settles',
  })
  @ApiConflictResponse({
    type: MessageResponse,
    description: 'The call has not ended, has no transcript, or no model provider is configured',
  })
  @ApiNotFoundAs('message', 'Call not found.')
  reanalyse(@CurrentUser() user: AuthenticatedUser, @CallId() id: number): Promise<CallAnalysisQueuedResponse> {
    return this.calls.reanalyse(user, id);
  }

  @Delete('calls/:id')
  @ApiOperation({ operationId: 'deleteCall', summary: 'Delete a call record' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('message', 'Call not found.')
  delete(@CurrentUser() user: AuthenticatedUser, @CallId() id: number): Promise<MessageResponse> {
    return this.calls.delete(user, id);
  }
}
