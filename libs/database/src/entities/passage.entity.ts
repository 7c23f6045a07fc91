import { Column, Entity } from 'typeorm';
import { OwnedEntity } from './owned.entity';

/** A searchable piece of a document's text. `search_vector` is a generated column with a GIN index. */
@Entity({ name: 'passages' })
export class Passage extends OwnedEntity {
  @Column({ name: 'knowledgebase_id', type: 'integer' })
  knowledgebaseId: number;

  @Column({ name: 'document_id', type: 'integer' })
  documentId: number;

  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'text' })
  content: string;

  @Column({ name: 'source_url', type: 'text', nullable: true })
  sourceUrl: string | null;
}
