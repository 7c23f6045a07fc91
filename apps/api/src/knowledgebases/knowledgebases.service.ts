import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
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
  toKnowledgebaseResponse,
} from '@app/contracts';
import { InjectTenantRepository, Knowledgebase, KnowledgebaseSummaries, TenantRepository } from '@app/database';
import type { AuthenticatedUser } from '../auth/auth-context';

interface SearchRow {
  document_id: number;
  document_name: string;
  content: string;
  score: number;
  source_url: string | null;
}

@Injectable()
export class KnowledgebasesService {
  constructor(
    @InjectTenantRepository(Knowledgebase) private readonly knowledgebases: TenantRepository<Knowledgebase>,
    private readonly summaries: KnowledgebaseSummaries,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async list(user: AuthenticatedUser): Promise<KnowledgebaseListResponse> {
    const summaries = await this.summaries.list(user.id);
    return { data: summaries.map(toKnowledgebaseResponse) };
  }

  async get(user: AuthenticatedUser, id: number): Promise<KnowledgebaseEnvelope> {
    return { data: await this.summary(user, id) };
  }

  async create(user: AuthenticatedUser, request: CreateKnowledgebaseRequest): Promise<KnowledgebaseMessageEnvelope> {
    const knowledgebase = await this.knowledgebases.create(user.id, {
      name: request.name,
      description: request.description ?? null,
    });
    // A new knowledgebase has no documents: its figures are known without asking the database again.
    const data = toKnowledgebaseResponse({
      ...knowledgebase,
      documentsCount: 0,
      processingCount: 0,
      failedCount: 0,
      assistantsCount: 0,
    });
    return { message: 'Knowledgebase created successfully.', data };
  }

  async update(
    user: AuthenticatedUser,
    id: number,
    request: UpdateKnowledgebaseRequest,
  ): Promise<KnowledgebaseMessageEnvelope> {
    const changes = {
      ...(request.name !== undefined ? { name: request.name } : {}),
      ...(request.description !== undefined ? { description: request.description } : {}),
    };
    const found =
      Object.keys(changes).length > 0
        ? await this.knowledgebases.update(user.id, id, changes)
        : await this.knowledgebases.exists(user.id, { id });
    if (!found) throw Errors.knowledgebaseNotFound();
    return { message: 'Knowledgebase updated successfully.', data: await this.summary(user, id) };
  }

  /** Its documents, their files, pages and passages go with it (foreign keys cascade). */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.knowledgebases.delete(user.id, id))) throw Errors.knowledgebaseNotFound();
    return { message: 'Knowledgebase deleted successfully.' };
  }

  /**
   * Ranked passages for an assistant to use as context. `websearch_to_tsquery` accepts what people type
   * (quotes, OR, -word) without syntax errors; `ts_rank_cd` favours passages where the words stand close.
   */
  async search(user: AuthenticatedUser, id: number, query: SearchKnowledgebaseQuery): Promise<SearchResponse> {
    if (!(await this.knowledgebases.exists(user.id, { id }))) throw Errors.knowledgebaseNotFound();
    const rows: SearchRow[] = await this.dataSource.query(
      `SELECT passage.document_id, document.name AS document_name, passage.content, passage.source_url,
              ts_rank_cd(passage.search_vector, search.query)::float8 AS score
         FROM passages passage
         JOIN documents document ON document.id = passage.document_id,
              websearch_to_tsquery('simple', immutable_unaccent($3)) AS search(query)
        WHERE passage.user_id = $1 AND passage.knowledgebase_id = $2 AND passage.search_vector @@ search.query
        ORDER BY score DESC, passage.id
        LIMIT $4`,
      [user.id, id, query.query, query.limit],
    );
    return {
      data: rows.map((row) => ({
        document_id: row.document_id,
        document_name: row.document_name,
        content: row.content,
        score: Math.round(row.score * 1e6) / 1e6,
        ...(row.source_url ? { source_url: row.source_url } : {}),
      })),
    };
  }

  private async summary(user: AuthenticatedUser, id: number) {
    const summary = await this.summaries.find(user.id, id);
    if (!summary) throw Errors.knowledgebaseNotFound();
    return toKnowledgebaseResponse(summary);
  }
}
