import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Request } from 'express';
import {
  ApiLengthAwarePage,
  AssistantEnvelope,
  AssistantListQuery,
  AssistantMessageEnvelope,
  AssistantResponse,
  CreateAssistantRequest,
  Errors,
  LengthAwarePage,
  MessageResponse,
  UpdateAssistantRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ApiValidatedQuery, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { AssistantsService } from './assistants.service';
import { UserPost } from '../idempotency/user-post.decorator';

const AssistantId = () => Param('id', new ResourceIdPipe(Errors.assistantNotFound));

@ApiUserResource('Assistants')
@Controller('user')
export class AssistantsController {
  constructor(private readonly assistants: AssistantsService) {}

  @Get('assistants/get')
  @ApiOperation({
    operationId: 'listAssistants',
    summary: 'List assistants, newest first; filter by folder, label or name',
  })
  @ApiLengthAwarePage(AssistantResponse)
  @ApiValidatedQuery()
  list(
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: AssistantListQuery,
    @Req() request: Request,
  ): Promise<LengthAwarePage<AssistantResponse>> {
    return this.assistants.list(user, query, request);
  }

  @UserPost('assistant')
  @ApiOperation({ operationId: 'createAssistant', summary: 'Create an assistant' })
  @ApiCreatedResponse({ type: AssistantMessageEnvelope })
  @ApiValidatedInput()
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateAssistantRequest,
  ): Promise<AssistantMessageEnvelope> {
    return this.assistants.create(user, body);
  }

  @Get('assistant/:id')
  @ApiOperation({ operationId: 'getAssistant', summary: 'Read an assistant with its links' })
  @ApiOkResponse({ type: AssistantEnvelope })
  @ApiNotFoundAs('message', 'Assistant not found.')
  get(@CurrentUser() user: AuthenticatedUser, @AssistantId() id: number): Promise<AssistantEnvelope> {
    return this.assistants.get(user, id);
  }

  @Put('assistant/:id')
  @ApiOperation({ operationId: 'updateAssistant', summary: 'Update an assistant; lists sent replace, `[]` clears' })
  @ApiOkResponse({ type: AssistantMessageEnvelope })
  @ApiValidatedInput()
  @ApiNotFoundAs('message', 'Assistant not found.')
  update(
    @CurrentUser() user: AuthenticatedUser,
    @AssistantId() id: number,
    @Body() body: UpdateAssistantRequest,
  ): Promise<AssistantMessageEnvelope> {
    return this.assistants.update(user, id, body);
  }

  @Delete('assistant/:id')
  @ApiOperation({ operationId: 'deleteAssistant', summary: 'Delete an assistant; its call history stays' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('message', 'Assistant not found.')
  delete(@CurrentUser() user: AuthenticatedUser, @AssistantId() id: number): Promise<MessageResponse> {
    return this.assistants.delete(user, id);
  }

  @UserPost('assistant/:id/webhook-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateWebhookSecret', summary: 'Replace the secret that signs webhook deliveries' })
  @ApiOkResponse({ type: AssistantMessageEnvelope })
  @ApiNotFoundAs('message', 'Assistant not found.')
  rotateWebhookSecret(
    @CurrentUser() user: AuthenticatedUser,
    @AssistantId() id: number,
  ): Promise<AssistantMessageEnvelope> {
    return this.assistants.rotateWebhookSecret(user, id);
  }
}
