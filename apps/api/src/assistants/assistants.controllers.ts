import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Query, Req, Type } from '@nestjs/common';
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
  DomainError,
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
import { NamedColours } from './named-colours.service';
import { FoldersService, LabelsService } from './organisation.services';
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

interface NamedColourRoutes {
  /** `folder` or `label`: the paths are `/user/<singular>` and `/user/<singular>s`. */
  singular: 'folder' | 'label';
  noun: 'Folder' | 'Label';
  notFound: () => DomainError;
}

/**
 * Folders and labels answer the same routes with the same shapes; one definition serves both, so the two cannot
 * drift apart. Each gets its own class, with its own OpenAPI tag and operation ids.
 */
function namedColourController(routes: NamedColourRoutes, service: Type<NamedColours>) {
  const { singular, noun } = routes;
  const plural = `${singular}s`;
  const Id = () => Param('id', new ResourceIdPipe(routes.notFound));

  @ApiUserResource(`${noun}s`)
  @Controller('user')
  class NamedColourController {
    constructor(@Inject(service) readonly items: NamedColours) {}

    @Get(plural)
    @ApiOperation({ operationId: `list${noun}s`, summary: `List ${plural}, newest first` })
    @ApiSlimPage(NamedColourResponse)
    @ApiValidatedQuery()
    list(@CurrentUser() user: AuthenticatedUser, @Query() query: PageQuery): Promise<SlimPage<NamedColourResponse>> {
      return this.items.list(user, query);
    }

    @UserPost(singular)
    @ApiOperation({ operationId: `create${noun}`, summary: `Create a ${singular}` })
    @ApiCreatedResponse({ type: NamedColourMessageEnvelope })
    @ApiValidatedInput()
    create(
      @CurrentUser() user: AuthenticatedUser,
      @Body() body: CreateNamedColourRequest,
    ): Promise<NamedColourMessageEnvelope> {
      return this.items.create(user, body);
    }

    @Put(`${singular}/:id`)
    @ApiOperation({ operationId: `update${noun}`, summary: `Rename or recolour a ${singular}` })
    @ApiOkResponse({ type: NamedColourMessageEnvelope })
    @ApiValidatedInput()
    @ApiNotFoundAs('message', `${noun} not found.`)
    update(
      @CurrentUser() user: AuthenticatedUser,
      @Id() id: number,
      @Body() body: UpdateNamedColourRequest,
    ): Promise<NamedColourMessageEnvelope> {
      return this.items.update(user, id, body);
    }

    @Delete(`${singular}/:id`)
    @ApiOperation({
      operationId: `delete${noun}`,
      summary:
        singular === 'folder' ? 'Delete a folder; its assistants become unfiled' : 'Delete a label; assistants lose it',
    })
    @ApiOkResponse({ type: MessageResponse })
    @ApiNotFoundAs('message', `${noun} not found.`)
    delete(@CurrentUser() user: AuthenticatedUser, @Id() id: number): Promise<MessageResponse> {
      return this.items.delete(user, id);
    }
  }
  Object.defineProperty(NamedColourController, 'name', { value: `${noun}sController` });
  return NamedColourController;
}

export const FoldersController = namedColourController(
  { singular: 'folder', noun: 'Folder', notFound: Errors.folderNotFound },
  FoldersService,
);
export const LabelsController = namedColourController(
  { singular: 'label', noun: 'Label', notFound: Errors.labelNotFound },
  LabelsService,
);
