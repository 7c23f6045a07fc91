import { Body, Controller, Delete, Get, Param, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  ApiLengthAwarePage,
  CallEnvelope,
  CallListQuery,
  CallResponse,
  Errors,
  IngestCallRequest,
  IngestCallResponse,
  LengthAwarePage,
  MakeCallRequest,
  MakeCallResponse,
  MessageResponse,
} from '@app/contracts';
import {
  ApiNotFoundAs,
  ApiPublicResource,
  ApiUserResource,
  ApiValidatedInput,
  ApiValidatedQuery,
  Public,
  ResourceIdPipe,
  SkipRateLimit,
} from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { CallIngestion } from '@app/calls';
import { CallsService } from './calls.service';
import { RuntimeTokenGuard } from './runtime-token.guard';
import { Post } from '../idempotency/post-route.decorator';

const CallId = () => Param('id', new ResourceIdPipe(Errors.callNotFound));
const EXTERNAL_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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

  @Post('make_call')
  @ApiOperation({ operationId: 'makeCall', summary: 'Place one outbound call now, from the assistant’s number' })
  @ApiCreatedResponse({ type: MakeCallResponse })
  @ApiValidatedInput()
  makeCall(@CurrentUser() user: AuthenticatedUser, @Body() body: MakeCallRequest): Promise<MakeCallResponse> {
    return this.calls.makeCall(user, body);
  }

  @Delete('calls/:id')
  @ApiOperation({ operationId: 'deleteCall', summary: 'Delete a call record' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('message', 'Call not found.')
  delete(@CurrentUser() user: AuthenticatedUser, @CallId() id: number): Promise<MessageResponse> {
    return this.calls.delete(user, id);
  }
}

/** For the voice runtime only, with its own token (see RuntimeTokenGuard); not rate limited. */
@ApiPublicResource('Voice runtime')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: MessageResponse, description: 'Unauthenticated.' })
@Public()
@SkipRateLimit()
@UseGuards(RuntimeTokenGuard)
@Controller('internal')
export class InternalCallsController {
  constructor(private readonly ingestion: CallIngestion) {}

  @Put('calls/:externalId')
  @ApiOperation({
    operationId: 'ingestCall',
    summary: 'Create or update a call by the runtime’s id (201 first, 200 after)',
  })
  @ApiCreatedResponse({ type: IngestCallResponse, description: 'First write of this call' })
  @ApiOkResponse({ type: IngestCallResponse, description: 'A later write' })
  @ApiValidatedInput()
  @ApiConflictResponse({
    type: MessageResponse,
    description: 'The call already has another final status, or belongs to another account than the assistant',
  })
  @ApiNotFoundAs('message', 'Not found.')
  async ingest(
    @Param('externalId') externalId: string,
    @Body() body: IngestCallRequest,
    @Res({ passthrough: true }) response: Response,
  ): Promise<IngestCallResponse> {
    if (!EXTERNAL_ID.test(externalId)) throw Errors.routeNotFound();
    const result = await this.ingestion.write(externalId, body);
    response.status(result.created ? 201 : 200);
    return result.body;
  }
}
