import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Request } from 'express';
import {
  ApiLengthAwarePage,
  ApiSlimPage,
  AssistantEnvelope,
  AssistantListQuery,
  AssistantMessageEnvelope,
  AssistantResponse,
  CreateAssistantRequest,
  CreateNamedColourRequest,
  Errors,
  LengthAwarePage,
  MessageResponse,
  NamedColourMessageEnvelope,
  NamedColourResponse,
  PageQuery,
  SlimPage,
  UpdateAssistantRequest,
  UpdateNamedColourRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ApiValidatedQuery, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { AssistantsService } from './assistants.service';
import { FoldersService, LabelsService } from './organisation.services';

const AssistantId = () => Param('id', new ResourceIdPipe(Errors.assistantNotFound));
const FolderId = () => Param('id', new ResourceIdPipe(Errors.folderNotFound));
const LabelId = () => Param('id', new ResourceIdPipe(Errors.labelNotFound));

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

  @Post('assistant')
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

  @Post('assistant/:id/webhook-secret')
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

@ApiUserResource('Folders')
@Controller('user')
export class FoldersController {
  constructor(private readonly folders: FoldersService) {}

  @Get('folders')
  @ApiOperation({ operationId: 'listFolders', summary: 'List folders, newest first' })
  @ApiSlimPage(NamedColourResponse)
  @ApiValidatedQuery()
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: PageQuery): Promise<SlimPage<NamedColourResponse>> {
    return this.folders.list(user, query);
  }

  @Post('folder')
  @ApiOperation({ operationId: 'createFolder', summary: 'Create a folder' })
  @ApiCreatedResponse({ type: NamedColourMessageEnvelope })
  @ApiValidatedInput()
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateNamedColourRequest,
  ): Promise<NamedColourMessageEnvelope> {
    return this.folders.create(user, body);
  }

  @Put('folder/:id')
  @ApiOperation({ operationId: 'updateFolder', summary: 'Rename or recolour a folder' })
  @ApiOkResponse({ type: NamedColourMessageEnvelope })
  @ApiValidatedInput()
  @ApiNotFoundAs('message', 'Folder not found.')
  update(
    @CurrentUser() user: AuthenticatedUser,
    @FolderId() id: number,
    @Body() body: UpdateNamedColourRequest,
  ): Promise<NamedColourMessageEnvelope> {
    return this.folders.update(user, id, body);
  }

  @Delete('folder/:id')
  @ApiOperation({ operationId: 'deleteFolder', summary: 'Delete a folder; its assistants become unfiled' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('message', 'Folder not found.')
  delete(@CurrentUser() user: AuthenticatedUser, @FolderId() id: number): Promise<MessageResponse> {
    return this.folders.delete(user, id);
  }
}

@ApiUserResource('Labels')
@Controller('user')
export class LabelsController {
  constructor(private readonly labels: LabelsService) {}

  @Get('labels')
  @ApiOperation({ operationId: 'listLabels', summary: 'List labels, newest first' })
  @ApiSlimPage(NamedColourResponse)
  @ApiValidatedQuery()
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: PageQuery): Promise<SlimPage<NamedColourResponse>> {
    return this.labels.list(user, query);
  }

  @Post('label')
  @ApiOperation({ operationId: 'createLabel', summary: 'Create a label' })
  @ApiCreatedResponse({ type: NamedColourMessageEnvelope })
  @ApiValidatedInput()
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateNamedColourRequest,
  ): Promise<NamedColourMessageEnvelope> {
    return this.labels.create(user, body);
  }

  @Put('label/:id')
  @ApiOperation({ operationId: 'updateLabel', summary: 'Rename or recolour a label' })
  @ApiOkResponse({ type: NamedColourMessageEnvelope })
  @ApiValidatedInput()
  @ApiNotFoundAs('message', 'Label not found.')
  update(
    @CurrentUser() user: AuthenticatedUser,
    @LabelId() id: number,
    @Body() body: UpdateNamedColourRequest,
  ): Promise<NamedColourMessageEnvelope> {
    return this.labels.update(user, id, body);
  }

  @Delete('label/:id')
  @ApiOperation({ operationId: 'deleteLabel', summary: 'Delete a label; assistants lose it' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('message', 'Label not found.')
  delete(@CurrentUser() user: AuthenticatedUser, @LabelId() id: number): Promise<MessageResponse> {
    return this.labels.delete(user, id);
  }
}
