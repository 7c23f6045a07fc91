import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { KnowledgebaseSummary } from '@app/contracts';

interface SummaryRow {
  id: number;
  name: string;
  description: string | null;
  language_id: number | null;
  created_at: Date;
  updated_at: Date;
  documents_count: number;
  processing_count: number;
  failed_count: number;
  assistants_count: number;
}

/** An account's knowledgebases ($1 the owner) with their figures, or only the one with id $2 when not null. */
export const KNOWLEDGEBASE_SUMMARIES_SQL = `SELECT kb.id, kb.name, kb.description, kb.language_id, kb.created_at, kb.updated_at,
              count(d.id)::int AS documents_count,
              count(d.id) FILTER (WHERE d.status = 'processing')::int AS processing_count,
              count(d.id) FILTER (WHERE d.status = 'failed')::int AS failed_count,
              (SELECT count(*) FROM assistants a WHERE a.knowledgebase_id = kb.id)::int AS assistants_count
         FROM knowledgebases kb
         LEFT JOIN documents d ON d.knowledgebase_id = kb.id
        WHERE kb.user_id = $1 AND ($2::int IS NULL OR kb.id = $2)
        GROUP BY kb.id
        ORDER BY kb.id DESC`;

/**
 * Knowledgebases with the figures derived from their documents, computed when read: the status can never
 * disagree with the documents, whatever order concurrent workers finish in.
 */
@Injectable()
export class KnowledgebaseSummaries {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  list(ownerId: number): Promise<KnowledgebaseSummary[]> {
    return this.query(ownerId);
  }

  async find(ownerId: number, id: number): Promise<KnowledgebaseSummary | null> {
    const [summary] = await this.query(ownerId, id);
    return summary ?? null;
  }

  private async query(ownerId: number, id?: number): Promise<KnowledgebaseSummary[]> {
    const rows: SummaryRow[] = await this.dataSource.query(KNOWLEDGEBASE_SUMMARIES_SQL, [ownerId, id ?? null]);
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      description: row.description,
      languageId: row.language_id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      documentsCount: row.documents_count,
      processingCount: row.processing_count,
      failedCount: row.failed_count,
      assistantsCount: row.assistants_count,
    }));
  }
}
