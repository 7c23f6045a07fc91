import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type DocumentPageStatus = 'fetched' | 'failed' | 'skipped';

/** One page a website document fetched (or tried to), in crawl order. */
@Entity({ name: 'document_pages' })
export class DocumentPage {
  @PrimaryGeneratedColumn('identity', { generatedIdentity: 'ALWAYS' })
  id: number;

  @Column({ name: 'document_id', type: 'integer' })
  documentId: number;

  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'varchar', length: 16 })
  status: DocumentPageStatus;

  @Column({ name: 'http_status', type: 'integer', nullable: true })
  httpStatus: number | null;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  @Column({ type: 'integer', default: 0 })
  characters: number;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** SHA-256 of the page's text; a refresh leaves the passages of a page whose hash is unchanged. */
  @Column({ name: 'content_hash', type: 'text', nullable: true })
  contentHash: string | null;
}
