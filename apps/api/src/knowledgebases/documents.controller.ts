import { Body, Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
} from '@nestjs/swagger';
import {
  CreateDocumentRequest,
  CreateDocumentResponse,
  CreateFileDocumentBody,
  CreateWebsiteDocumentBody,
  DocumentEnvelope,
  DocumentListResponse,
  ErrorFieldResponse,
  Errors,
  MessageResponse,
} from '@app/contracts';
import {
  ApiBodyPerMediaType,
  ApiNotFoundAs,
  ApiUnavailableAs,
  ApiUserResource,
  ApiValidatedInput,
  ResourceIdPipe,
} from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { FileUpload } from '../http/file-upload.interceptor';
import { DocumentsService } from './documents.service';
import { UserPost } from '../idempotency/user-post.decorator';

const KnowledgebaseId = () => Param('knowledgebaseId', new ResourceIdPipe(Errors.knowledgebaseNotFound));
const DocumentId = () => Param('documentId', new ResourceIdPipe(Errors.documentNotFound));

@ApiUserResource('Knowledgebases')
@Controller('user/knowledgebases/:knowledgebaseId/documents')
export class DocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  @Get()
  @ApiOperation({ operationId: 'listDocuments', summary: 'List the documents of a knowledgebase' })
  @ApiOkResponse({ type: DocumentListResponse })
  @ApiNotFoundAs('error', 'Knowledgebase not found.')
  list(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
  ): Promise<DocumentListResponse> {
    return this.documents.list(user, knowledgebaseId);
  }

  @UserPost()
  @FileUpload()
  @ApiOperation({
    operationId: 'createDocument',
    summary: 'Add a document: a website as JSON, or a PDF, TXT or Word file as multipart; processed in the background',
  })
  @ApiBodyPerMediaType({
    'application/json': CreateWebsiteDocumentBody,
    'multipart/form-data': CreateFileDocumentBody,
  })
  @ApiCreatedResponse({ type: CreateDocumentResponse, description: 'Accepted; processing continues in the background' })
  @ApiValidatedInput()
  @ApiNotFoundAs('error', 'Knowledgebase not found.')
  @ApiUnavailableAs('Processing could not be started; or too many uploads are in progress (with `Retry-After`)')
  create(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
    @Body() body: CreateDocumentRequest,
  ): Promise<CreateDocumentResponse> {
    return this.documents.create(user, knowledgebaseId, body);
  }

  @Get(':documentId')
  @ApiOperation({ operationId: 'getDocument', summary: 'Read a document, with its processing outcome' })
  @ApiOkResponse({ type: DocumentEnvelope })
  @ApiNotFoundAs('error', 'Knowledgebase not found. / Document not found.')
  get(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
    @DocumentId() id: number,
  ): Promise<DocumentEnvelope> {
    return this.documents.get(user, knowledgebaseId, id);
  }

  @UserPost(':documentId/refresh')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'refreshDocument',
    summary: 'Re-crawl a website document now, in the background; unchanged pages keep their passages',
  })
  @ApiAcceptedResponse({ type: MessageResponse, description: 'Started; `last_refresh` on the read shows the outcome' })
  @ApiValidatedInput('Not a website, or still being processed')
  @ApiNotFoundAs('error', 'Knowledgebase not found. / Document not found.')
  @ApiServiceUnavailableResponse({
    type: ErrorFieldResponse,
    description: 'The refresh could not be started; try again',
  })
  refresh(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
    @DocumentId() id: number,
  ): Promise<MessageResponse> {
    return this.documents.refresh(user, knowledgebaseId, id);
  }

  @Delete(':documentId')
  @ApiOperation({ operationId: 'deleteDocument', summary: 'Delete a document and its passages' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiNotFoundAs('error', 'Knowledgebase not found. / Document not found.')
  delete(
    @CurrentUser() user: AuthenticatedUser,
    @KnowledgebaseId() knowledgebaseId: number,
    @DocumentId() id: number,
  ): Promise<MessageResponse> {
    return this.documents.delete(user, knowledgebaseId, id);
  }
}
