import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An uploaded file, kept in Postgres until processed so any worker on any machine can read it; deleted once
 * its text is extracted. Separate from `documents` so lists never read the bytes.
 */
@Entity({ name: 'document_files' })
export class DocumentFile {
  @PrimaryColumn({ name: 'document_id', type: 'integer' })
  documentId: number;

  @Column({ type: 'bytea' })
  content: Buffer;
}
