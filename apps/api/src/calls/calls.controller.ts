import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Query, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  ApiLengthAwarePage,
  CallAnalysisQueuedResponse,
  CallControlTextRequest,
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
import { LiveCallsService } from './live-calls.service';
import { UserPost } from '../idempotency/user-post.decorator';

const CallId = () => Param('id', new ResourceIdPipe(Errors.callNotFound));

/** A route of the owner's live control: 202 once the message is stored for the call's runtime. */
const LiveControlRoute = (action: string, operationId: string, summary: string) =>
  applyDecorators(
    UserPost(`calls/:id/${action}`),
    HttpCode(202),
    ApiOperation({ operationId, summary }),
    ApiAcceptedResponse({ type: MessageResponse, description: 'On its way to the call’s runtime' }),
    ApiNotFoundAs('message', 'Call not found.'),
    ApiConflictResponse({ type: MessageResponse, description: 'The call has already ended' }),
  );

const WATCH_DESCRIPTION =
  'Each event of the call (`transcript`, `note`, `tool_call`, `control`, and the call-control kinds) as it is ' +
  'stored, on any API process: `id` is the event’s id, `event` its type, `data` the event as ' +
  '`GET /user/calls/{id}/events` lists it. Reconnecting with `Last-Event-ID` (as EventSource does) delivers what ' +
  'came after that event, nothing twice. A comment line every 15 seconds keeps the connection open. Once the call ' +
  'has ended and everything stored before is sent, an `end` event closes the stream. An ended call can be replayed ' +
  'after a `Last-Event-ID`; without one it is 409. At most 100 streams of an account are open at once on one API ' +
  'process.';
const WATCH_EXAMPLE =
  'retry: 1000\n\nid: 41\nevent: transcript\ndata: {"type":"transcript","at":"2026-01-02T03:04:05.678Z","seq":7,' +
  '"role":"user","text":"I would like to book a table."}\n\n';

@ApiUserResource('Calls')
@Controller('user')
export class CallsController {
  constructor(
    private readonly calls: CallsService,
    private readonly live: LiveCallsService,
  ) {}

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

  @Get('calls/:id/events/stream')
  @ApiOperation({
    operationId: 'watchCallEvents',
    summary: 'Watch a live call: its events as they are stored, as server-sent events, until it ends',
    description: WATCH_DESCRIPTION,
  })
  @ApiOkResponse({
    description: 'The stream (`text/event-stream`), open until the call ends',
    content: { 'text/event-stream': { schema: { type: 'string', example: WATCH_EXAMPLE } } },
  })
  @ApiValidatedInput('`Last-Event-ID` is not an event id')
  @ApiNotFoundAs('message', 'Call not found.')
  @ApiConflictResponse({ type: MessageResponse, description: 'The call has ended (and no `Last-Event-ID` was sent)' })
  @ApiTooManyRequestsResponse({ type: MessageResponse, description: 'The account has too many live streams open' })
  @ApiServiceUnavailableResponse({
    type: MessageResponse,
    description: 'This API process holds all the streams it may, or is shutting down: reconnect after `Retry-After`',
  })
  watch(
    @CurrentUser() user: AuthenticatedUser,
    @CallId() id: number,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    return this.live.watch(user, id, request, response);
  }

  @LiveControlRoute('hangup', 'hangUpCall', 'Hang up a live call: its runtime ends it, or the provider does within 5 s')
  hangup(@CurrentUser() user: AuthenticatedUser, @CallId() id: number): Promise<MessageResponse> {
    return this.live.control(user, id, 'hangup');
  }

  @LiveControlRoute('say', 'sayInCall', 'Have the assistant of a live call say a text, as it is')
  @ApiValidatedInput()
  say(
    @CurrentUser() user: AuthenticatedUser,
    @CallId() id: number,
    @Body() body: CallControlTextRequest,
  ): Promise<MessageResponse> {
    return this.live.control(user, id, 'say', body.text);
  }

  @LiveControlRoute(
    'instruct',
    'instructCall',
    'Add an instruction to the model’s context in a live call (the caller does not hear it)',
  )
  @ApiValidatedInput()
  instruct(
    @CurrentUser() user: AuthenticatedUser,
    @CallId() id: number,
    @Body() body: CallControlTextRequest,
  ): Promise<MessageResponse> {
    return this.live.control(user, id, 'instruct', body.text);
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
