import { Body, Controller, Delete, Get, Param, Post, UseInterceptors } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import {
  CreateDocumentRequest,
  CreateDocumentResponse,
  DocumentEnvelope,
  DocumentListResponse,
  ErrorFieldResponse,
  Errors,
  MessageResponse,
} from '@app/contracts';
import { ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { DocumentUploadInterceptor } from './document-upload.interceptor';
import { DocumentsService } from './documents.service';

const KnowledgebaseId = () => Param('knowledgebaseId', new ResourceIdPipe(Errors.knowledgebaseNotFound));
const DocumentId = () => Param('documentId', new ResourceIdPipe(Errors.documentNotFound));

@ApiTags('Knowledgebases')
@ApiBearerAuth()
@ApiNotFoundResponse({ type: ErrorFieldResponse, description: 'Knowledgebase not found. / Document not found.' })
@Controller('user/knowledgebases/:knowledgebaseId/documents')
export class DocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  @Get()
  @ApiOkResponse({ type: DocumentListResponse })
  list(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
  ): Promise<DocumentListResponse> {
    return this.documents.list(user, knowledgebaseId);
  }

  @Post()
  @UseInterceptors(DocumentUploadInterceptor)
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiCreatedResponse({ type: CreateDocumentResponse, description: 'Accepted; processing continues in the background' })
  @ApiServiceUnavailableResponse({
    type: ErrorFieldResponse,
    description: 'Processing could not be started; try again',
  })
  create(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
    @Body() body: CreateDocumentRequest,
  ): Promise<CreateDocumentResponse> {
    return this.documents.create(user, knowledgebaseId, body);
  }

  @Get(':documentId')
  @ApiOkResponse({ type: DocumentEnvelope })
  get(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
    @DocumentId() id: number,
  ): Promise<DocumentEnvelope> {
    return this.documents.get(user, knowledgebaseId, id);
  }

  @Delete(':documentId')
  @ApiOkResponse({ type: MessageResponse })
  delete(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
    @DocumentId() id: number,
  ): Promise<MessageResponse> {
    return this.documents.delete(user, knowledgebaseId, id);
  }
}
