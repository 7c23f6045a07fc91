import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  CreateKnowledgebaseRequest,
  Errors,
  KnowledgebaseEnvelope,
  KnowledgebaseListResponse,
  KnowledgebaseMessageEnvelope,
  MessageResponse,
  SearchKnowledgebaseQuery,
  SearchResponse,
  toKnowledgebaseResponse,
  toSearchResult,
  UpdateKnowledgebaseRequest,
  ValidationFailed,
} from '@app/contracts';
import {
  InjectTenantRepository,
  Knowledgebase,
  KnowledgebaseSummaries,
  LanguagesRepository,
  PassageSearch,
  TenantRepository,
  Transactions,
} from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';
import { errorMessage } from '@app/platform';
import { FUSED_DEPTH, MeaningSearch } from './meaning-search';

const CREATED_MESSAGE = 'Knowledgebase created successfully.';

@Injectable()
export class KnowledgebasesService implements OnModuleInit {
  private readonly logger = new Logger(KnowledgebasesService.name);

  constructor(
    @InjectTenantRepository(Knowledgebase) private readonly knowledgebases: TenantRepository<Knowledgebase>,
    private readonly summaries: KnowledgebaseSummaries,
    private readonly passages: PassageSearch,
    private readonly jobs: JobQueue,
    private readonly transactions: Transactions,
    private readonly languages: LanguagesRepository,
    private readonly creates: IdempotentCreates,
    private readonly meaning: MeaningSearch,
  ) {}

  onModuleInit(): void {
    this.creates.recoverWith('knowledgebase', async (user, id) => ({
      message: CREATED_MESSAGE,
      data: await this.summary(user, id),
    }));
  }

  async list(user: AuthenticatedUser): Promise<KnowledgebaseListResponse> {
    const summaries = await this.summaries.list(user.id);
    return { data: summaries.map(toKnowledgebaseResponse) };
  }

  async get(user: AuthenticatedUser, id: number): Promise<KnowledgebaseEnvelope> {
    return { data: await this.summary(user, id) };
  }

  async create(user: AuthenticatedUser, request: CreateKnowledgebaseRequest): Promise<KnowledgebaseMessageEnvelope> {
    await this.checkLanguage(request.language_id);
    const knowledgebase = await this.transactions.run(async (transaction) => {
      const created = await this.knowledgebases.within(transaction).create(user.id, {
        name: request.name,
        description: request.description ?? null,
        languageId: request.language_id ?? null,
      });
      await this.creates.record(transaction, 'knowledgebase', created.id);
      return created;
    });
    // A new knowledgebase has no documents: its figures are known without asking the database again.
    const data = toKnowledgebaseResponse({
      ...knowledgebase,
      documentsCount: 0,
      processingCount: 0,
      failedCount: 0,
      assistantsCount: 0,
    });
    return { message: CREATED_MESSAGE, data };
  }

  /**
   * A new language re-indexes the passages on the worker. The job is enqueued after the change commits (so it
   * reads the new language); if it cannot be, the language is put back and the caller told to retry.
   */
  async update(
    user: AuthenticatedUser,
    id: number,
    request: UpdateKnowledgebaseRequest,
  ): Promise<KnowledgebaseMessageEnvelope> {
    await this.checkLanguage(request.language_id);
    const changes = {
      ...(request.name !== undefined ? { name: request.name } : {}),
      ...(request.description !== undefined ? { description: request.description } : {}),
      ...(request.language_id !== undefined ? { languageId: request.language_id } : {}),
    };
    const previous = await this.knowledgebases.findOneWhere(user.id, { id });
    if (!previous) throw Errors.knowledgebaseNotFound();
    if (Object.keys(changes).length > 0 && !(await this.knowledgebases.update(user.id, id, changes))) {
      throw Errors.knowledgebaseNotFound();
    }
    const languageChanged = request.language_id !== undefined && request.language_id !== previous.languageId;
    if (languageChanged) {
      try {
        await this.jobs.enqueue(Jobs.reindexKnowledgebase, { knowledgebaseId: id });
      } catch (error) {
        this.logger.error({ knowledgebaseId: id, error: errorMessage(error) }, 'could not enqueue re-index');
        const restored = Object.fromEntries(
          Object.keys(changes).map((key) => [key, previous[key as keyof typeof changes]]),
        );
        await this.knowledgebases.update(user.id, id, restored);
        throw Errors.serviceUnavailable();
      }
    }
    return { message: 'Knowledgebase updated successfully.', data: await this.summary(user, id) };
  }

  /** Its documents, their files, pages and passages go with it (foreign keys cascade). */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.knowledgebases.delete(user.id, id))) throw Errors.knowledgebaseNotFound();
    return { message: 'Knowledgebase deleted successfully.' };
  }

  /** Ranked passages for an assistant to use as context (see PassageSearch for how they are ranked). */
  search(user: AuthenticatedUser, id: number, query: SearchKnowledgebaseQuery): Promise<SearchResponse> {
    return this.searchOwned(user.id, id, query);
  }

  /** The same search for whoever acts for the owner (the voice runtime, for its call's assistant). */
  async searchOwned(ownerId: number, id: number, query: SearchKnowledgebaseQuery): Promise<SearchResponse> {
    if (!(await this.knowledgebases.exists(ownerId, { id }))) throw Errors.knowledgebaseNotFound();
    if (!this.meaning.applies(query.query)) {
      const hits = await this.passages.search(ownerId, id, query.query, query.limit);
      return { data: hits.map(toSearchResult) };
    }
    // By words and by meaning: the lexical ranking's first FUSED_DEPTH (the first `limit` highlighted) fused with the
    // nearest passages.
    const depth = Math.max(query.limit, FUSED_DEPTH);
    const lexical = await this.passages.search(ownerId, id, query.query, depth, undefined, query.limit);
    const hits = await this.meaning.fuse(ownerId, id, query.query, query.limit, lexical);
    return { data: hits.map(toSearchResult) };
  }

  private async checkLanguage(languageId: number | null | undefined): Promise<void> {
    if (languageId === undefined || languageId === null) return;
    if (!(await this.languages.exists(languageId)))
      throw new ValidationFailed({ language_id: ['The selected language id is invalid.'] });
  }

  private async summary(user: AuthenticatedUser, id: number) {
    const summary = await this.summaries.find(user.id, id);
    if (!summary) throw Errors.knowledgebaseNotFound();
    return toKnowledgebaseResponse(summary);
  }
}
