import { Body, Controller, Delete, Get, Inject, Param, Put, Query, Type } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import {
  ApiSlimPage,
  CreateNamedColourRequest,
  DomainError,
  MessageResponse,
  NamedColourMessageEnvelope,
  NamedColourResponse,
  PageQuery,
  SlimPage,
  UpdateNamedColourRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ApiValidatedQuery, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { NamedColours } from './named-colours.service';
import { UserPost } from '../idempotency/user-post.decorator';

export interface NamedColourRoutes {
  /** `folder` or `label`: the paths are `/user/<singular>` and `/user/<singular>s`. */
  singular: 'folder' | 'label';
  noun: 'Folder' | 'Label';
  notFound: () => DomainError;
}

/**
 * Folders and labels answer the same routes with the same shapes; one definition serves both, so the two cannot
 * drift apart. Each gets its own class, with its own OpenAPI tag and operation ids.
 */
export function namedColourController(routes: NamedColourRoutes, service: Type<NamedColours>) {
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
