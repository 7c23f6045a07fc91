import { Body, Controller, Delete, Get, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CreateKnowledgebaseRequest,
  ErrorFieldResponse,
  Errors,
  KnowledgebaseEnvelope,
  KnowledgebaseListResponse,
  KnowledgebaseMessageEnvelope,
  MessageResponse,
  SearchKnowledgebaseQuery,
  SearchResponse,
  UpdateKnowledgebaseRequest,
} from '@app/contracts';
import { ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { KnowledgebasesService } from './knowledgebases.service';

const KnowledgebaseId = () => Param('id', new ResourceIdPipe(Errors.knowledgebaseNotFound));

@ApiTags('Knowledgebases')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorFieldResponse, description: 'Knowledgebase not found.' })
@Controller('user/knowledgebases')
export class KnowledgebasesController {
  constructor(private readonly knowledgebases: KnowledgebasesService) {}

  @Get()
  @ApiOkResponse({ type: KnowledgebaseListResponse })
  list(@CurrentUser() user: AuthenticatedUser): Promise<KnowledgebaseListResponse> {
    return this.knowledgebases.list(user);
  }

  @Post()
  @ApiCreatedResponse({ type: KnowledgebaseMessageEnvelope })
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateKnowledgebaseRequest,
  ): Promise<KnowledgebaseMessageEnvelope> {
    return this.knowledgebases.create(user, body);
  }

  @Get(':id')
  @ApiOkResponse({ type: KnowledgebaseEnvelope })
  get(@CurrentUser() user: AuthenticatedUser, @KnowledgebaseId() id: number): Promise<KnowledgebaseEnvelope> {
    return this.knowledgebases.get(user, id);
  }

  @Put(':id')
  @ApiOkResponse({ type: KnowledgebaseMessageEnvelope })
  update(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() id: number,
    @Body() body: UpdateKnowledgebaseRequest,
  ): Promise<KnowledgebaseMessageEnvelope> {
    return this.knowledgebases.update(user, id, body);
  }

  @Delete(':id')
  @ApiOkResponse({ type: MessageResponse })
  delete(@CurrentUser() user: AuthenticatedUser, @KnowledgebaseId() id: number): Promise<MessageResponse> {
    return this.knowledgebases.delete(user, id);
  }

  @Get(':id/search')
  @ApiOkResponse({ type: SearchResponse, description: 'Ranked passages, best first' })
  search(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() id: number,
    @Query() query: SearchKnowledgebaseQuery,
  ): Promise<SearchResponse> {
    return this.knowledgebases.search(user, id, query);
  }
}
