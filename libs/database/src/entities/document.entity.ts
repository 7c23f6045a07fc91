import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import { OwnedEntity } from './owned.entity';

export const DocumentTypes = ['website', 'pdf', 'txt', 'docx'] as const;
export type DocumentType = (typeof DocumentTypes)[number];
export const FileDocumentTypes = ['pdf', 'txt', 'docx'] as const;
export type FileDocumentType = (typeof FileDocumentTypes)[number];

/** What the last refresh of a website did (see the worker's DocumentRefresh). */
export interface DocumentRefreshOutcome {
  status: 'succeeded' | 'failed';
  finished_at: string;
  pages_added: number;
  pages_changed: number;
  pages_removed: number;
  pages_unchanged: number;
  error: string | null;
}

export const DocumentStatuses = ['processing', 'active', 'failed'] as const;
export type DocumentStatus = (typeof DocumentStatuses)[number];

/**
 * A source of knowledge. The row is also the outbox of its processing job: it is written first, the job is
 * enqueued with a deterministic id, and the worker's sweeper re-enqueues rows left in `processing`.
 */
@Entity({ name: 'documents' })
export class Document extends OwnedEntity {
  @Column({ name: 'knowledgebase_id', type: 'integer' })
  knowledgebaseId: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 16 })
  type: DocumentType;

  @Column({ type: 'varchar', length: 16, default: 'processing' })
  status: DocumentStatus;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage: string | null;

  /** Website start URL (crawl mode). */
  @Column({ name: 'source_url', type: 'text', nullable: true })
  sourceUrl: string | null;

  /** Website pages to fetch exactly (links mode). */
  @Column({ name: 'source_links', type: 'jsonb', nullable: true })
  sourceLinks: string[] | null;

  @Column({ name: 'relative_links_limit', type: 'integer', nullable: true })
  relativeLinksLimit: number | null;

  @Column({ name: 'file_name', type: 'varchar', length: 255, nullable: true })
  fileName: string | null;

  @Column({ name: 'file_size', type: 'integer', nullable: true })
  fileSize: number | null;

  /** Characters of text extracted. */
  @Column({ name: 'content_length', type: 'integer', default: 0 })
  contentLength: number;

  /** Websites: re-crawled this often, if set. */
  @Column({ name: 'refresh_interval_hours', type: 'integer', nullable: true })
  refreshIntervalHours: number | null;

  /** When the worker's schedule next enqueues a refresh; null without an interval. */
  @Column({ name: 'next_refresh_at', type: 'timestamptz', nullable: true })
  nextRefreshAt: Date | null;

  @Column({ name: 'last_refreshed_at', type: 'timestamptz', nullable: true })
  lastRefreshedAt: Date | null;

  @Column({ name: 'last_refresh', type: 'jsonb', nullable: true })
  lastRefresh: DocumentRefreshOutcome | null;

  /** How many times the sweeper has re-enqueued this document; bounded so a poison document ends as failed. */
  @Column({ name: 'sweep_count', type: 'integer', default: 0 })
  sweepCount: number;

  /** The version of the passage cutter that wrote the passages (PASSAGE_CUT_VERSION); older ones are re-cut. */
  @Column({ name: 'passages_cut', type: 'smallint', default: 1 })
  passagesCut: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
