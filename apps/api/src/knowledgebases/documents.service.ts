import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  CreateDocumentRequest,
  CreateDocumentResponse,
  DEFAULT_RELATIVE_LINKS_LIMIT,
  DocumentEnvelope,
  DocumentListResponse,
  Errors,
  MessageResponse,
  toDocumentDetailResponse,
  toDocumentResponse,
  ValidationFailed,
} from '@app/contracts';
import {
  Document,
  DocumentsRepository,
  DocumentType,
  InjectTenantRepository,
  Knowledgebase,
  TenantRepository,
  Transactions,
} from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';
import { errorMessage } from '@app/platform';

@Injectable()
export class DocumentsService implements OnModuleInit {
  private readonly logger = new Logger(DocumentsService.name);

  constructor(
    @InjectTenantRepository(Knowledgebase) private readonly knowledgebases: TenantRepository<Knowledgebase>,
    private readonly documents: DocumentsRepository,
    private readonly transactions: Transactions,
    private readonly jobs: JobQueue,
    private readonly creates: IdempotentCreates,
  ) {}

  /** A document whose job was not queued before its process died is queued by the worker's sweeper. */
  onModuleInit(): void {
    this.creates.recoverWith('document', async (user, id) => {
      const document = await this.documents.findOne(user.id, id);
      if (!document) throw Errors.documentNotFound();
      return this.created(document);
    });
  }

  async list(user: AuthenticatedUser, knowledgebaseId: number): Promise<DocumentListResponse> {
    await this.assertKnowledgebase(user, knowledgebaseId);
    const documents = await this.documents.list(user.id, knowledgebaseId);
    return { data: documents.map(toDocumentResponse) };
  }

  async get(user: AuthenticatedUser, knowledgebaseId: number, id: number): Promise<DocumentEnvelope> {
    await this.assertKnowledgebase(user, knowledgebaseId);
    const document = await this.documents.findInKnowledgebase(user.id, knowledgebaseId, id);
    if (!document) throw Errors.documentNotFound();
    const pages = document.type === 'website' ? await this.documents.pages(user.id, id) : [];
    return { data: toDocumentDetailResponse(document, pages) };
  }

  /**
   * Writes the document (and its file) first, then enqueues its job under a deterministic id. If the enqueue
   * fails the rows are removed again and the caller is told to retry, so nothing is left half-made; a crash
   * between the two is repaired by the worker's sweeper.
   */
  async create(
    user: AuthenticatedUser,
    knowledgebaseId: number,
    request: CreateDocumentRequest,
  ): Promise<CreateDocumentResponse> {
    await this.assertKnowledgebase(user, knowledgebaseId);
    const isWebsite = request.type === 'website';
    const file = isWebsite ? undefined : request.file;

    const document = await this.transactions.run(async (transaction) => {
      // Locked so that a delete of the knowledgebase waits for the document (and then deletes it too).
      if ((await transaction.lockReferences('knowledgebases', [knowledgebaseId], user.id)).size === 0) {
        throw Errors.knowledgebaseNotFound();
      }
      const created = await this.documents.within(transaction).create(
        user.id,
        {
          knowledgebaseId,
          name: request.name,
          description: request.description ?? null,
          type: request.type as DocumentType,
          status: 'processing',
          sourceUrl: isWebsite ? (request.url ?? null) : null,
          sourceLinks: isWebsite && request.links ? request.links.map((item) => item.link) : null,
          relativeLinksLimit: isWebsite ? (request.relative_links_limit ?? DEFAULT_RELATIVE_LINKS_LIMIT) : null,
          refreshIntervalHours: isWebsite ? (request.refresh_interval_hours ?? null) : null,
          nextRefreshAt:
            isWebsite && request.refresh_interval_hours
              ? new Date(Date.now() + request.refresh_interval_hours * 3_600_000)
              : null,
          fileName: file ? file.originalName.slice(0, 255) : null,
          fileSize: file ? file.size : null,
        },
        file?.buffer,
      );
      await this.creates.record(transaction, 'document', created.id);
      return created;
    });

    try {
      await this.jobs.enqueue(Jobs.processDocument, { documentId: document.id });
    } catch (error) {
      this.logger.error({ documentId: document.id, error: errorMessage(error) }, 'could not enqueue document');
      await this.documents.delete(user.id, document.id);
      throw Errors.processingNotStarted();
    }
    return this.created(document);
  }

  private created(document: Document): CreateDocumentResponse {
    return { message: 'Document created successfully.', data: toDocumentResponse(document) };
  }

  /**
   * Re-crawls a website now, on the worker. Its content stays searchable meanwhile; the read shows the outcome
   * in `last_refresh`. A refresh already waiting is not enqueued twice.
   */
  async refresh(user: AuthenticatedUser, knowledgebaseId: number, id: number): Promise<MessageResponse> {
    await this.assertKnowledgebase(user, knowledgebaseId);
    const document = await this.documents.findInKnowledgebase(user.id, knowledgebaseId, id);
    if (!document) throw Errors.documentNotFound();
    if (document.type !== 'website') {
      throw ValidationFailed.field('document', 'Only website documents can be refreshed.');
    }
    if (document.status === 'processing') {
      throw ValidationFailed.field('document', 'The document is still being processed.');
    }
    try {
      await this.jobs.enqueue(Jobs.refreshDocument, { documentId: id });
    } catch (error) {
      this.logger.error({ documentId: id, error: errorMessage(error) }, 'could not enqueue refresh');
      throw Errors.processingNotStarted();
    }
    return { message: 'Document refresh started.' };
  }

  /** Its file, pages and passages go with it; a job still running for it finds it gone and stops. */
  async delete(user: AuthenticatedUser, knowledgebaseId: number, id: number): Promise<MessageResponse> {
    await this.assertKnowledgebase(user, knowledgebaseId);
    if (!(await this.documents.deleteInKnowledgebase(user.id, knowledgebaseId, id))) throw Errors.documentNotFound();
    return { message: 'Document deleted successfully.' };
  }

  private async assertKnowledgebase(user: AuthenticatedUser, id: number): Promise<void> {
    if (!(await this.knowledgebases.exists(user.id, { id }))) throw Errors.knowledgebaseNotFound();
  }
}
