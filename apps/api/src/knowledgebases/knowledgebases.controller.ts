import { Body, Controller, Delete, Get, Param, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse } from '@nestjs/swagger';
import {
  CreateKnowledgebaseRequest,
  Errors,
  KnowledgebaseEnvelope,
  KnowledgebaseListResponse,
  KnowledgebaseMessageEnvelope,
  MessageResponse,
  SearchKnowledgebaseQuery,
  SearchResponse,
  UpdateKnowledgebaseRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ApiValidatedQuery, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { KnowledgebasesService } from './knowledgebases.service';
import { UserPost } from '../idempotency/user-post.decorator';

const KnowledgebaseId = () => Param('id', new ResourceIdPipe(Errors.knowledgebaseNotFound));

const ApiKnowledgebaseNotFound = () => ApiNotFoundAs('error', 'Knowledgebase not found.');

@ApiUserResource('Knowledgebases')
@Controller('user/knowledgebases')
export class KnowledgebasesController {
  constructor(private readonly knowledgebases: KnowledgebasesService) {}

  @Get()
  @ApiOperation({ operationId: 'listKnowledgebases', summary: 'List the knowledgebases of the account' })
  @ApiOkResponse({ type: KnowledgebaseListResponse })
  list(@CurrentUser() user: AuthenticatedUser): Promise<KnowledgebaseListResponse> {
    return this.knowledgebases.list(user);
  }

  @UserPost()
  @ApiOperation({ operationId: 'createKnowledgebase', summary: 'Create a knowledgebase' })
  @ApiCreatedResponse({ type: KnowledgebaseMessageEnvelope })
  @ApiValidatedInput()
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateKnowledgebaseRequest,
  ): Promise<KnowledgebaseMessageEnvelope> {
    return this.knowledgebases.create(user, body);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getKnowledgebase', summary: 'Read a knowledgebase' })
  @ApiOkResponse({ type: KnowledgebaseEnvelope })
  @ApiKnowledgebaseNotFound()
  get(@CurrentUser() user: AuthenticatedUser, @KnowledgebaseId() id: number): Promise<KnowledgebaseEnvelope> {
    return this.knowledgebases.get(user, id);
  }

  @Put(':id')
  @ApiOperation({ operationId: 'updateKnowledgebase', summary: 'Update a knowledgebase (partial)' })
  @ApiOkResponse({ type: KnowledgebaseMessageEnvelope })
  @ApiValidatedInput()
  @ApiKnowledgebaseNotFound()
  @ApiServiceUnavailableResponse({
    type: MessageResponse,
    description: 'A new language could not start re-indexing; nothing changed, try again',
  })
  update(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() id: number,
    @Body() body: UpdateKnowledgebaseRequest,
  ): Promise<KnowledgebaseMessageEnvelope> {
    return this.knowledgebases.update(user, id, body);
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteKnowledgebase',
    summary: 'Delete a knowledgebase with its documents; assistants using it are detached',
  })
  @ApiOkResponse({ type: MessageResponse })
  @ApiKnowledgebaseNotFound()
  delete(@CurrentUser() user: AuthenticatedUser, @KnowledgebaseId() id: number): Promise<MessageResponse> {
    return this.knowledgebases.delete(user, id);
  }

  @Get(':id/search')
  @ApiOperation({ operationId: 'searchKnowledgebase', summary: 'Passages that answer a query, best first' })
  @ApiOkResponse({ type: SearchResponse, description: 'Ranked passages, best first' })
  @ApiValidatedQuery()
  @ApiKnowledgebaseNotFound()
  search(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() id: number,
    @Query() query: SearchKnowledgebaseQuery,
  ): Promise<SearchResponse> {
    return this.knowledgebases.search(user, id, query);
  }
}
