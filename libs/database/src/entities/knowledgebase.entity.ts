import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import { OwnedEntity } from './owned.entity';

@Entity({ name: 'knowledgebases' })
export class Knowledgebase extends OwnedEntity {
  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  /** Decides the text search configuration of its passages; none indexes words as they are. */
  @Column({ name: 'language_id', type: 'integer', nullable: true })
  languageId: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
