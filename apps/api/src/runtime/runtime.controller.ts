import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadGatewayResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiServiceUnavailableResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  CallControlMessage,
  CallRejectedResponse,
  CallSessionEnvelope,
  CallSessionRequest,
  Errors,
  IngestCallRequest,
  IngestCallResponse,
  InvokeToolRequest,
  MessageResponse,
  RuntimeEventsEnvelope,
  RuntimeEventsRequest,
  SearchKnowledgebaseQuery,
  SearchResponse,
  ToolInvocationEnvelope,
  TransferCallRequest,
  CallTransferEnvelope,
} from '@app/contracts';
import { CallIngestion, type RuntimeCredential } from '@app/calls';
import {
  ApiCallLimit,
  ApiNotFoundAs,
  ApiPublicResource,
  ApiValidatedInput,
  ApiValidatedQuery,
  Public,
  ResourceIdPipe,
  SkipRateLimit,
} from '@app/platform';
import { CallRuntime } from './call-runtime.service';
import { CallSessions } from './call-sessions.service';
import { ExternalIdPipe } from './external-id.pipe';
import { CallTransfers } from './call-transfers.service';
import { CallTokenAccepted, RuntimeCaller, RuntimeTokenGuard } from './runtime-token.guard';

const ExternalId = () => Param('externalId', new ExternalIdPipe(Errors.callNotFound));
const ToolId = () => Param('toolId', new ResourceIdPipe(Errors.toolNotFound));

/**
 * The voice runtime's API (a LiveKit agent, or any other): with the deployment's RUNTIME_API_TOKEN, or for the
 * routes of one call with the call token its session handed out. Never a user's token; not rate limited.
 */
@ApiPublicResource('Voice runtime')
@ApiParam({
  name: 'externalId',
  description: 'The runtime’s own id of the call: its room’s name at the provider',
  example: 'call-room-1',
})
@ApiBearerAuth()
@ApiUnauthorizedResponse({
  type: MessageResponse,
  description:
    'Unauthenticated: no token, a wrong one, a user’s, or a call token of another call, expired, or of a call whose ' +
    'status is final (which it may use only to repeat the final write)',
})
@Public()
@SkipRateLimit()
@UseGuards(RuntimeTokenGuard)
@Controller('internal/calls/:externalId')
export class RuntimeController {
  constructor(
    private readonly sessions: CallSessions,
    private readonly runtime: CallRuntime,
    private readonly ingestion: CallIngestion,
    private readonly transfers: CallTransfers,
  ) {}

  @Post('session')
  @ApiOperation({
    operationId: 'openCallSession',
    summary: 'Open a call’s session: the assistant to run, its tools and knowledgebase, and a call token (201 first)',
  })
  @ApiCreatedResponse({ type: CallSessionEnvelope, description: 'The call is new' })
  @ApiOkResponse({ type: CallSessionEnvelope, description: 'The call existed (placed by the service, or a retry)' })
  @ApiValidatedInput()
  @ApiNotFoundAs('message', 'No assistant answers this number.')
  @ApiConflictResponse({ type: MessageResponse, description: 'The call has already ended' })
  @ApiForbiddenResponse({
    type: CallRejectedResponse,
    description:
      'The owner’s ring-time hook refused the inbound call: say `reject.message` (when not null) and hang up. The ' +
      'call is recorded as ended; every later session of it answers the same',
  })
  @ApiCallLimit(
    'A new call beyond its account’s limit of calls in progress: nothing was recorded; refuse the caller politely ' +
      'and hang up (trying again does not help the caller on the line)',
  )
  async session(
    @ExternalId() externalId: string,
    @Body() body: CallSessionRequest,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CallSessionEnvelope> {
    const result = await this.sessions.open(externalId, body);
    response.status(result.created ? 201 : 200);
    return result.body;
  }

  @Get('knowledge')
  @CallTokenAccepted()
  @ApiOperation({
    operationId: 'searchCallKnowledge',
    summary: 'Search the call’s assistant’s knowledgebase, as the user search answers',
  })
  @ApiOkResponse({ type: SearchResponse, description: 'Ranked passages, best first; none without a knowledgebase' })
  @ApiValidatedQuery()
  @ApiNotFoundAs('message', 'Call not found.')
  knowledge(@ExternalId() externalId: string, @Query() query: SearchKnowledgebaseQuery): Promise<SearchResponse> {
    return this.runtime.knowledge(externalId, query);
  }

  @Post('tools/:toolId/invoke')
  @HttpCode(200)
  @CallTokenAccepted()
  @ApiOperation({
    operationId: 'invokeCallTool',
    summary: 'Call one of the assistant’s tools; the endpoint’s answer, or why none came, within the tool’s timeout',
  })
  @ApiOkResponse({ type: ToolInvocationEnvelope })
  @ApiValidatedInput('An argument breaks the tool’s schema')
  @ApiNotFoundAs('message', 'Tool not found (or not the call’s assistant’s), or call not found.')
  invoke(
    @ExternalId() externalId: string,
    @ToolId() toolId: number,
    @Body() body: InvokeToolRequest,
  ): Promise<ToolInvocationEnvelope> {
    return this.runtime.invoke(externalId, toolId, body);
  }

  @Post('events')
  @HttpCode(200)
  @CallTokenAccepted('until-final-write-checked-by-write')
  @ApiOperation({
    operationId: 'recordCallEvents',
    summary: 'Record transcript turns and notes, idempotent on their seq, in any order, a batch all or nothing',
    description:
      'At most 100 events a request; a longer list is refused for its size alone. An event already recorded under ' +
      'its `seq` with the same content is a duplicate (counted in `duplicates`); with other content the whole batch ' +
      'is refused (409) and none of it stored. `at` must fall within the call’s life, five minutes either side for ' +
      'clocks that differ: from its creation to its end, or to now while it runs. Once the call’s status is final a ' +
      'call token is refused (401).',
  })
  @ApiOkResponse({ type: RuntimeEventsEnvelope })
  @ApiValidatedInput(
    'An event is invalid (a note with a `role`, `end_ms` before `start_ms`, `at` outside the call’s life, a seq twice ' +
      'with other content), or the list is over 100; nothing is stored',
  )
  @ApiNotFoundAs('message', 'Call not found.')
  @ApiConflictResponse({
    type: MessageResponse,
    description: 'An event of the batch has other content than the one recorded under its seq (none is stored)',
  })
  events(
    @ExternalId() externalId: string,
    @Body() body: RuntimeEventsRequest,
    @RuntimeCaller() caller: RuntimeCredential,
  ): Promise<RuntimeEventsEnvelope> {
    return this.runtime.record(externalId, body, caller);
  }

  @Get('control')
  @CallTokenAccepted()
  @ApiOperation({
    operationId: 'followCallControl',
    summary: 'The owner’s control of the call (hang up, say, instruct) as server-sent events, until the call ends',
    description:
      'Hold this stream open for the whole call. Each message is an event `control` whose `id` is the message’s and ' +
      'whose `data` is a `CallControlMessage`: `hangup` (end the call now, then write its final status; unconfirmed ' +
      'after 5 seconds, the service ends it at the provider), `say` (speak `text` as it is) or `instruct` (add ' +
      '`text` to the model’s context). Reconnect with `Last-Event-ID` (as EventSource does) to get what was asked ' +
      'meanwhile, nothing twice. A comment line every 15 seconds keeps the connection open; the call’s final write ' +
      'ends the stream with an `end` event.',
  })
  @ApiExtraModels(CallControlMessage)
  @ApiOkResponse({
    description: 'The stream (`text/event-stream`) of `CallControlMessage`s, open until the call ends',
    content: {
      'text/event-stream': {
        schema: {
          type: 'string',
          example:
            'retry: 1000\n\nid: 42\nevent: control\ndata: {"id":42,"action":"say","text":"One moment please.",' +
            '"at":"2026-01-02T03:04:05.678Z"}\n\n',
        },
      },
    },
  })
  @ApiValidatedInput('`Last-Event-ID` is not an event id')
  @ApiNotFoundAs('message', 'Call not found.')
  @ApiConflictResponse({ type: MessageResponse, description: 'The call has already ended' })
  @ApiServiceUnavailableResponse({
    type: MessageResponse,
    description: 'This API process holds all the streams it may, or is shutting down: reconnect after `Retry-After`',
  })
  control(@ExternalId() externalId: string, @Req() request: Request, @Res() response: Response): Promise<void> {
    return this.runtime.control(externalId, request, response);
  }

  @Post('transfer')
  @HttpCode(202)
  @CallTokenAccepted()
  @ApiOperation({
    operationId: 'transferCall',
    summary: 'Transfer the caller to one of the assistant’s destinations, by name; answers how it went',
    description:
      'Only a destination of the call’s assistant (422 otherwise: a model never dials a number of its own). The ' +
      'telephony provider hands the phone call over (LiveKit `TransferSIPParticipant`) and the answer comes once it ' +
      'has: `transferred` (the call leaves the room; end the session, and write the call `ended`), or `failed` / ' +
      '`declined` with a `reason` and a `message` the assistant can say, the caller still on the line. The call ' +
      'records it (`transfer`, an event, `ended_reason: transferred`).',
  })
  @ApiAcceptedResponse({ type: CallTransferEnvelope })
  @ApiValidatedInput('`destination` is not one of the assistant’s')
  @ApiNotFoundAs('message', 'Call not found.')
  @ApiConflictResponse({
    type: MessageResponse,
    description: 'The call has already ended, was already transferred, or another transfer of it is under way',
  })
  @ApiBadGatewayResponse({
    type: MessageResponse,
    description: 'The telephony provider failed; the caller is still with the assistant, the failure recorded',
  })
  transfer(@ExternalId() externalId: string, @Body() body: TransferCallRequest): Promise<CallTransferEnvelope> {
    return this.transfers.transfer(externalId, body);
  }

  @Post('transfer/briefed')
  @HttpCode(202)
  @CallTokenAccepted()
  @ApiOperation({
    operationId: 'transferBriefed',
    summary: 'The assistant in a warm transfer’s consultation room has briefed the person: join them to the caller',
    description:
      'A warm transfer rings the person into a consultation room with the agent dispatched there (its job metadata ' +
      '`{external_id, consultation: {destination, summary}}`). Once the agent has told the person about the call, ' +
      'it posts this, and the transfer joins the person to the caller; without it the transfer joins them after ' +
      '`TRANSFER_BRIEFING_TIMEOUT_SECONDS` anyway.',
  })
  @ApiAcceptedResponse({ type: MessageResponse, description: 'The transfer goes on' })
  @ApiNotFoundAs('message', 'Call not found.')
  @ApiConflictResponse({ type: MessageResponse, description: 'No transfer of the call is under way' })
  transferBriefed(@ExternalId() externalId: string): Promise<MessageResponse> {
    return this.transfers.briefed(externalId);
  }

  @Put()
  @CallTokenAccepted('final-write')
  @ApiOperation({
    operationId: 'ingestCall',
    summary: 'Create or update a call by the runtime’s id (201 first, 200 after)',
    description:
      'The first write creates the call from `assistant_id`, `type`, `status` and both numbers; a later write gives ' +
      'only what changed and keeps the rest (`variables` merge into the call’s key by key). A call token cannot name ' +
      'another assistant, campaign or lead than its call’s (422 on the field), and once the call’s status is final ' +
      'it may only repeat a write that changes nothing: 200 with the call as it is, anything else 401. The ' +
      'deployment’s token may still write to a finished call, and move a call to another assistant of its account.',
  })
  @ApiCreatedResponse({ type: IngestCallResponse, description: 'First write of this call' })
  @ApiOkResponse({ type: IngestCallResponse, description: 'A later write, or a call token’s repeat of the final one' })
  @ApiValidatedInput(
    'Invalid data, a field the first write needs, or (with a call token) another assistant, campaign or lead',
  )
  @ApiConflictResponse({
    type: MessageResponse,
    description: 'The call already has another final status, or belongs to another account than the assistant',
  })
  @ApiNotFoundAs('message', 'Not found.')
  async ingest(
    // A write's route answers a plain "not found" for an id no call could have, as for a path it does not know.
    @Param('externalId', new ExternalIdPipe(Errors.routeNotFound)) externalId: string,
    @Body() body: IngestCallRequest,
    @RuntimeCaller() caller: RuntimeCredential,
    @Res({ passthrough: true }) response: Response,
  ): Promise<IngestCallResponse> {
    const result = await this.ingestion.write(externalId, body, caller);
    response.status(result.created ? 201 : 200);
    return result.body;
  }
}
